#include "interval_advice.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "store.h"

namespace ckptfwd::cli {

double young_interval(double c, double mtbf) { return std::sqrt(2 * c * mtbf); }

double daly_interval(double c, double mtbf) {
  if (c >= 2 * mtbf) return mtbf;
  double x = c / (2 * mtbf);
  return std::sqrt(2 * c * mtbf) * (1 + std::sqrt(x) / 3 + x / 9) - c;
}

double lost_fraction(double t, double c, double mtbf) {
  if (t <= 0 || mtbf <= 0) return 1;
  double wall_per_work = mtbf * std::expm1((t + c) / mtbf) / t;
  return wall_per_work > 1 ? 1 - 1 / wall_per_work : 0;
}

bool parse_duration(const std::string& text, double* seconds, std::string* err) {
  char* end = nullptr;
  double v = std::strtod(text.c_str(), &end);
  std::string unit = end ? end : "";
  double scale = 0;
  if (unit.empty() || unit == "s")
    scale = 1;
  else if (unit == "m" || unit == "min")
    scale = 60;
  else if (unit == "h")
    scale = 3600;
  else if (unit == "d")
    scale = 86400;
  else if (unit == "w")
    scale = 7 * 86400;
  if (end == text.c_str() || scale == 0 || !std::isfinite(v) || v <= 0) {
    *err = "'" + text +
           "' is not a duration: give a positive number with a unit s, m, h, d or w (e.g. 24h, "
           "3600s, 2d)";
    return false;
  }
  *seconds = v * scale;
  return true;
}

std::string human_duration(double s) {
  char b[64];
  if (s < 60) {
    snprintf(b, sizeof b, s < 10 ? "%.2f s" : "%.0f s", s);
  } else if (s < 3600) {
    long t = std::lround(s);
    snprintf(b, sizeof b, "%ld min %ld s", t / 60, t % 60);
  } else if (s < 86400) {
    long t = std::lround(s / 60);
    snprintf(b, sizeof b, "%ld h %ld min", t / 60, t % 60);
  } else {
    snprintf(b, sizeof b, "%.1f d", s / 86400);
  }
  return b;
}

namespace {

double number(const Json& rec, const char* key) {
  auto it = rec.find(key);
  return it != rec.end() && it->is_number() ? it->get<double>() : 0;
}

Json estimate(double c, double mtbf) {
  double t = daly_interval(c, mtbf);
  return Json{{"checkpoint_s", c}, {"interval_s", t}, {"lost_fraction", lost_fraction(t, c, mtbf)}};
}

}  // namespace

Json interval_advice(const Json& rec, double mtbf_s) {
  double measured = number(rec, "checkpoints_measured");
  double c = number(rec, "ckpt_blocked_s");
  double bytes = number(rec, "ckpt_bytes");
  double stored = number(rec, "bytes_stored"), write_s = number(rec, "time_write_s");
  Json with = Json();
  if (measured > 0 && c > 0) {
    with = estimate(c, mtbf_s);
    with["checkpoints_measured"] = static_cast<uint64_t>(measured);
  }
  Json without = Json();
  if (measured > 0 && bytes > 0 && stored > 0 && write_s > 0) {
    double bps = stored / write_s;
    without = estimate(bytes / bps, mtbf_s);
    without["checkpoint_bytes"] = static_cast<uint64_t>(bytes);
    without["store_write_bytes_per_s"] = std::round(bps);
  }
  return Json{{"mtbf_s", mtbf_s},
              {"model", "daly"},
              {"with_ckptfwd", std::move(with)},
              {"without_ckptfwd", std::move(without)}};
}

std::string interval_advice_text(const Json& a) {
  char line[512];
  std::string out;
  double mtbf = a["mtbf_s"].get<double>();
  snprintf(line, sizeof line,
           "  checkpoint interval advice for a mean time between failures of %s (Daly's\n"
           "  higher-order optimum; time lost = writing checkpoints + redoing work after a\n"
           "  failure, restart time not counted):\n",
           human_duration(mtbf).c_str());
  out += line;
  const Json& w = a["with_ckptfwd"];
  if (w.is_null()) {
    out += "    no complete checkpoint measured yet\n";
    return out;
  }
  auto row = [&](const char* who, const Json& e, const std::string& how) {
    snprintf(line, sizeof line, "    %-16s checkpoint every %s, time lost %.2f%%\n", who,
             human_duration(e["interval_s"].get<double>()).c_str(),
             e["lost_fraction"].get<double>() * 100);
    out += line;
    snprintf(line, sizeof line, "    %-16s C = %s %s\n", "",
             human_duration(e["checkpoint_s"].get<double>()).c_str(), how.c_str());
    out += line;
  };
  uint64_t n = w["checkpoints_measured"].get<uint64_t>();
  row("with ckptfwd:", w,
      "measured (the slowest process, mean of " + std::to_string(n) +
          (n == 1 ? " checkpoint)" : " checkpoints)"));
  const Json& d = a["without_ckptfwd"];
  if (d.is_null()) {
    out += "    without ckptfwd: unknown (no container write measured yet)\n";
  } else {
    auto bps = static_cast<unsigned long long>(d["store_write_bytes_per_s"].get<double>());
    row("without ckptfwd:", d,
        "estimated (" + human_bytes(d["checkpoint_bytes"].get<uint64_t>()) + " at " +
            human_bytes(bps) + "/s, the measured store write speed)");
  }
  return out;
}

}  // namespace ckptfwd::cli
