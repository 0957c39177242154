// ftcost page glue: the Emscripten Module settings, the canvas size (window size x devicePixelRatio),
// the loading indicator and error messages, file upload (picker and drag-and-drop), downloads, the
// clipboard, the URL hash, and the JavaScript API:
//
//   await window.ftcost.ready;
//   window.ftcost.estimate('{"model": "mixtral-8x7b", "gpu": "a40", "method": "qlora", "batch": "max"}')
//     -> the JSON text `ftcost estimate --json` prints for the same options (errors: {"error": {...}})
//   window.ftcost.compare('{"model": "mixtral-8x7b", "method": "qlora", "dataset": "math14k"}')
//     -> the JSON text `ftcost compare --json` prints (every GPU, cheapest first)
//   window.ftcost.list("gpus" | "models" | "datasets" | "prices" | "table4") -> JSON text
//   window.ftcost.ui() -> the calculator's state (request, view, link, messages, key results) as an object
//
// Nothing is sent anywhere: there is no network code here besides loading ftcost.js/ftcost.wasm.
"use strict";

(function () {
  const t0 = performance.now();
  const canvas = document.getElementById("canvas");
  const stage = document.getElementById("stage");
  const loading = document.getElementById("loading");
  const loadingText = document.getElementById("loading-text");
  const fatalBox = document.getElementById("fatal");
  const fatalText = document.getElementById("fatal-text");
  const fileInput = document.getElementById("file-input");
  const dropOverlay = document.getElementById("drop-overlay");
  let runtimeReady = false;
  let filePurpose = "";
  let readyResolve;

  // ---- links (repository and calibrator docs) ----
  const repo = ftcostRepoUrl();  // repo.js
  if (repo) {
    const r = document.getElementById("repo-link");
    r.href = repo;
    r.hidden = false;
    // the calibrator's docs are served with the page (calibrate.html shows docs/calibrate.md of this version)
  }

  function errorJson(code, message) {
    return JSON.stringify({ error: { code: code, field: "", message: message } });
  }

  function showFatal(message) {
    fatalText.textContent = message;
    fatalBox.hidden = false;
    loading.classList.add("done");
    console.error("ftcost: " + message);
  }
  window.ftcostLoadFailed = showFatal;

  // WebAssembly and WebGL2 are needed: say so at once when the browser has no such API. (Whether a
  // WebGL2 context can really be made is found out by the program, which reports it through ftcostFatal;
  // making a throw-away context here would cost the start-up of the GPU process twice.)
  if (typeof WebAssembly !== "object") {
    showFatal("This browser has no WebAssembly.");
  } else if (typeof WebGL2RenderingContext === "undefined") {
    showFatal("This browser does not support WebGL2.");
  }

  // ---- canvas size: the stage's size in CSS pixels; SDL sizes the backing store by devicePixelRatio ----
  function stageSize() {
    const r = stage.getBoundingClientRect();
    return { w: Math.max(1, Math.floor(r.width)), h: Math.max(1, Math.floor(r.height)) };
  }
  function applySize() {
    const s = stageSize();
    canvas.style.width = s.w + "px";
    canvas.style.height = s.h + "px";
    if (runtimeReady && Module._ftcost_ui_set_canvas_size) {
      Module._ftcost_ui_set_canvas_size(s.w, s.h, Math.round((window.devicePixelRatio || 1) * 100));
    }
  }
  applySize();
  if (window.ResizeObserver) new ResizeObserver(applySize).observe(stage);
  window.addEventListener("resize", applySize);
  (function watchPixelRatio() {
    // zooming or moving to another screen changes devicePixelRatio without always resizing the stage
    const mq = window.matchMedia("(resolution: " + (window.devicePixelRatio || 1) + "dppx)");
    const onChange = function () {
      applySize();
      watchPixelRatio();
    };
    if (mq.addEventListener) mq.addEventListener("change", onChange, { once: true });
  })();

  // ---- helpers handed to the program (see web/src/host_web.cpp) ----
  function callString(fn, args) {
    // strings in: malloc'ed copies (no stack limit on their size); string out: copied, owned by the program
    const ptrs = args.map(function (s) {
      const n = lengthBytesUTF8(s) + 1;
      const p = Module._malloc(n);
      stringToUTF8(s, p, n);
      return p;
    });
    try {
      const r = fn.apply(null, ptrs);
      return typeof r === "number" && r ? UTF8ToString(r) : "";
    } finally {
      ptrs.forEach(function (p) {
        Module._free(p);
      });
    }
  }
  function lengthBytesUTF8(s) {
    return Module.lengthBytesUTF8(s);
  }
  function stringToUTF8(s, p, n) {
    return Module.stringToUTF8(s, p, n);
  }
  function UTF8ToString(p) {
    return Module.UTF8ToString(p);
  }

  function deliverFile(purpose, file) {
    if (!file) return;
    if (file.size > 16 * 1024 * 1024) {
      console.warn("ftcost: " + file.name + " is larger than 16 MB; ignored");
      return;
    }
    file.text().then(function (text) {
      if (!runtimeReady) return;
      callString(Module._ftcost_ui_on_file, [purpose, file.name, text]);
    });
  }

  fileInput.addEventListener("change", function () {
    const f = fileInput.files && fileInput.files[0];
    deliverFile(filePurpose, f);
    fileInput.value = "";
  });

  // drag and drop anywhere on the page
  let dragDepth = 0;
  window.addEventListener("dragenter", function (e) {
    if (!e.dataTransfer || Array.prototype.indexOf.call(e.dataTransfer.types || [], "Files") < 0) return;
    e.preventDefault();
    dragDepth++;
    dropOverlay.hidden = false;
  });
  window.addEventListener("dragover", function (e) {
    e.preventDefault();
  });
  window.addEventListener("dragleave", function () {
    dragDepth = Math.max(0, dragDepth - 1);
    if (dragDepth === 0) dropOverlay.hidden = true;
  });
  window.addEventListener("drop", function (e) {
    e.preventDefault();
    dragDepth = 0;
    dropOverlay.hidden = true;
    const files = (e.dataTransfer && e.dataTransfer.files) || [];
    for (let i = 0; i < files.length; i++) deliverFile("", files[i]);
  });

  window.addEventListener("hashchange", function () {
    if (runtimeReady) Module._ftcost_ui_on_hash_change();
  });

  function copyText(text) {
    if (navigator.clipboard && navigator.clipboard.writeText) {
      navigator.clipboard.writeText(text).catch(function () {
        fallbackCopy(text);
      });
    } else {
      fallbackCopy(text);
    }
  }
  function fallbackCopy(text) {
    const ta = document.createElement("textarea");
    ta.value = text;
    ta.style.position = "fixed";
    ta.style.opacity = "0";
    document.body.appendChild(ta);
    ta.select();
    try {
      document.execCommand("copy");
    } catch (e) {
      /* nothing else to try */
    }
    document.body.removeChild(ta);
    canvas.focus();
  }

  // ---- the Emscripten module ----
  window.Module = {
    canvas: canvas,
    print: function (t) {
      console.log(t);
    },
    printErr: function (t) {
      console.warn(t);
    },
    setStatus: function (s) {
      if (s) loadingText.textContent = s.replace(/\(\d+\/\d+\)$/, "");
    },
    onAbort: function (what) {
      showFatal("The calculator stopped: " + what);
    },
    onRuntimeInitialized: function () {
      window.ftcost.timing.marks.wasm_ready = Math.round(performance.now());
      runtimeReady = true;
      applySize();
      readyResolve();
    },
    ftcostMark: function (name) {
      window.ftcost.timing.marks[name] = Math.round(performance.now());
    },
    ftcostFirstFrame: function () {
      window.ftcost.timing.marks.first_frame = Math.round(performance.now());
      const ms = performance.now() - t0;
      window.ftcost.timing.firstFrameMs = ms;
      loading.classList.add("done");
      canvas.focus();
      console.log("ftcost: first frame after " + ms.toFixed(0) + " ms");
    },
    ftcostFatal: showFatal,
    ftcostCopy: copyText,
    ftcostDownload: function (name, mime, content) {
      const url = URL.createObjectURL(new Blob([content], { type: mime }));
      const a = document.createElement("a");
      a.href = url;
      a.download = name;
      document.body.appendChild(a);
      a.click();
      document.body.removeChild(a);
      setTimeout(function () {
        URL.revokeObjectURL(url);
      }, 10000);
    },
    ftcostOpenPicker: function (purpose) {
      filePurpose = purpose || "";
      fileInput.click();
    },
    // A model's config.json from the Hugging Face Hub: the one request that leaves the machine, made only
    // when the user presses Fetch. Status 0: no answer (offline, blocked).
    ftcostFetchHub: function (id) {
      const url = "https://huggingface.co/" + id.split("/").map(encodeURIComponent).join("/") + "/resolve/main/config.json";
      const deliver = function (status, text) {
        if (!runtimeReady) return;
        callString(function (a, b) {
          return Module._ftcost_ui_on_hub_config(a, status, b);
        }, [id, text]);
      };
      fetch(url, { credentials: "omit" })
        .then(function (r) {
          return r.text().then(function (t) {
            deliver(r.status, r.status === 200 && t.length <= 8 * 1024 * 1024 ? t : "");
          });
        })
        .catch(function () {
          deliver(0, "");
        });
    },
    ftcostReadClipboard: function () {
      if (!navigator.clipboard || !navigator.clipboard.readText) return;
      navigator.clipboard.readText().then(
        function (text) {
          if (runtimeReady) callString(Module._ftcost_ui_on_clipboard, [text]);
        },
        function () {
          /* permission refused: the user pastes with Ctrl+V into the text box instead */
        }
      );
    },
  };

  // ---- the JavaScript API ----
  // A JSON request (text or object) to one of the program's request functions; errors as JSON, never thrown.
  function callRequest(fnName, request) {
    try {
      if (!runtimeReady) return errorJson("not_ready", "the calculator is still loading (await window.ftcost.ready)");
      const text = typeof request === "string" ? request : JSON.stringify(request === undefined ? {} : request);
      return callString(Module[fnName], [text]);
    } catch (e) {
      return errorJson("internal", String(e && e.message ? e.message : e));
    }
  }
  window.ftcost = {
    version: (document.querySelector('meta[name="ftcost-version"]') || {}).content || "",
    ready: new Promise(function (resolve) {
      readyResolve = resolve;
    }),
    // performance.now() at: app.js start, runtime ready (wasm compiled), main, WebGL context, first frame, ...
    timing: { start: t0, firstFrameMs: null, marks: { app_js: Math.round(t0) } },
    // request: JSON text (or an object) of `ftcost estimate` options; returns JSON text. Never throws.
    estimate: function (request) {
      return callRequest("_ftcost_estimate", request);
    },
    // request: JSON text (or an object) of `ftcost compare` options; returns the JSON text `ftcost compare
    // --json` prints: the job on every GPU, cheapest first. Never throws.
    compare: function (request) {
      return callRequest("_ftcost_compare", request);
    },
    // request: JSON text (or an object) of the job options plus the plan's constraints (deadline, budget,
    // max-gpus, providers, spot, gpus, methods, stacks, minimize, effective-batch); returns the JSON text
    // `ftcost plan --json` prints: the time/cost front, the best plan, why. Never throws.
    plan: function (request) {
      return callRequest("_ftcost_plan", request);
    },
    // request: one plan's "request" object; stack: trl | torchtune | axolotl | llamafactory | unsloth. Returns
    // JSON text {"stack", "command", "files": [{role, name, format, text}]}. Never throws.
    planConfig: function (request, stack) {
      try {
        if (!runtimeReady) return errorJson("not_ready", "the calculator is still loading (await window.ftcost.ready)");
        const text = typeof request === "string" ? request : JSON.stringify(request === undefined ? {} : request);
        return callString(Module._ftcost_plan_config, [text, String(stack)]);
      } catch (e) {
        return errorJson("internal", String(e && e.message ? e.message : e));
      }
    },
    // request: JSON text (or an object) of `ftcost scale` options (estimate options and "counts", e.g.
    // [1, 2, 4, 8, 16]); returns the JSON text `ftcost scale --json` prints: time, cost, throughput and
    // scaling efficiency per GPU count. Never throws.
    scaling: function (request) {
      return callRequest("_ftcost_scaling", request);
    },
    list: function (what) {
      try {
        if (!runtimeReady) return errorJson("not_ready", "the calculator is still loading");
        return callString(Module._ftcost_list, [String(what)]);
      } catch (e) {
        return errorJson("internal", String(e && e.message ? e.message : e));
      }
    },
    ui: function () {
      try {
        if (!runtimeReady) return null;
        return JSON.parse(callString(Module._ftcost_ui_request, []));
      } catch (e) {
        return null;
      }
    },
  };
})();
