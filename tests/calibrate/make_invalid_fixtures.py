#!/usr/bin/env python3
"""Regenerates tests/data/calibration/invalid/ from the valid fixture: one corruption per file, and
expected.json with the error code and JSON path the loader must report ("schema": whether the JSON
Schema can express the rule too). Run from the repository root after regenerating the fixture."""
import copy
import json

base = json.load(open('tests/data/calibration/h100-sxm-synthetic.json'))
cases = {}


def make(name, fn, code, field, schema):
    d = copy.deepcopy(base)
    fn(d)
    with open('tests/data/calibration/invalid/' + name, 'w') as f:
        json.dump(d, f, indent=2)
        f.write('\n')
    cases[name] = {"code": code, "field": field, "schema": schema}


m = lambda d: d['measurements']
make('missing-field.json', lambda d: m(d)['gemm'][3].pop('tflops_p10'), 'missing_field', 'measurements.gemm[3].tflops_p10', True)
make('negative-bandwidth.json', lambda d: m(d)['bandwidth'][1].__setitem__('gbps_median', -2950.0), 'out_of_range',
     'measurements.bandwidth[1].gbps_median', True)
make('wrong-schema-version.json', lambda d: d['meta'].__setitem__('schema', 'ftcost.calibration/99'), 'schema_mismatch',
     'meta.schema', True)
make('gemm-above-any-gpu.json', lambda d: m(d)['gemm'][2].update({'tflops_median': 25000.0, 'tflops_p90': 26000.0}),
     'out_of_range', 'measurements.gemm[2].tflops_median', True)
make('unknown-key.json', lambda d: m(d)['gemm'][0].__setitem__('tflop_median', 1.0), 'unknown_key',
     'measurements.gemm[0].tflop_median', True)
make('string-number.json', lambda d: d['device'].__setitem__('sm_count', '132'), 'wrong_type', 'device.sm_count', True)
make('raw-uuid.json', lambda d: d['device'].__setitem__('uuid_hash', 'GPU-5c5a4a3e-1d2b-3c4d-5e6f-708192a3b4c5'),
     'invalid_value', 'device.uuid_hash', True)
make('derived-mismatch.json', lambda d: d['derived'].__setitem__('memory_bandwidth_gbps', 9999.0), 'invalid_value',
     'derived.memory_bandwidth_gbps', False)
make('tokens-per-expert-sum.json', lambda d: m(d)['expert_gemm'][0]['tokens_per_expert'].__setitem__(0, 1),
     'invalid_value', 'measurements.expert_gemm[0].tokens_per_expert', False)
with open('tests/data/calibration/invalid/expected.json', 'w') as f:
    json.dump(cases, f, indent=2)
    f.write('\n')
