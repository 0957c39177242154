// What the result views share: the headline card and its badge, and the figures more than one view shows.
#pragma once

#include "app.hpp"
#include "imgui.h"

#include <map>
#include <string>
#include <vector>

namespace ftcost::web {

// A badge drawn after a card's title (the "calibrated" one): text, colour, and what its tooltip adds.
struct Badge {
  std::string text;
  ImVec4 color;
  std::string tooltip;
};

// A headline card: title, big value with its unit, up to three short lines under it. `shown` records
// what it drew (title, value, unit, lines) for tests.
void card(const char* id, float w, float h, const char* title, const std::string& value, const char* unit,
          const std::vector<std::string>& subs, const std::string& tooltip, const ImVec4& value_color,
          std::map<std::string, std::vector<std::string>>* shown, const Badge* badge = nullptr);

struct CardSpec {
  std::string id, title, value, unit;
  std::vector<std::string> subs;
  std::string tooltip;
  ImVec4 color;
  bool has_badge = false;
  Badge badge;
};

CardSpec make_card(const char* id, const std::string& title, const std::string& value,
                   const std::string& unit, const std::vector<std::string>& subs, const std::string& tooltip,
                   const ImVec4& color, const Badge* badge = nullptr);

// What a card of width w needs: padding, title, the big number, and its sub lines wrapped at the card's
// width.
float card_height(const CardSpec& c, float w, float big_line);

// The one "calibrated" badge: the text, its colour (amber when the file is synthetic or partial) and the
// tooltip naming the file, its device, the GPU and the fingerprint.
Badge calibration_badge(const YourCalibration& c);

// Paged optimizer states that do not fit beside the rest (in host RAM, not in the GPU's memory), GiB.
double paged_gib(const JobEstimate& e);

// "41,700 tokens/s of data (61,000 computed, padding included)": every place that shows a token rate.
std::string tokens_line(double data_tps, double computed_tps);

}  // namespace ftcost::web
