// The checkpoint interval advice (interval_advice.h) against numbers computed here, by
// hand and by the formulas written out again, and against the example of D. Ibtesham,
// D. Arnold and K. B. Ferreira, "Checkpoint Compression: Its Limitations and Comparisons
// with other Optimizations": each process checkpoints a third of its 2 GB at 1 MB/s, with
// a five-year MTBF.
#include <gtest/gtest.h>

#include <cmath>

#include "interval_advice.h"

namespace ckptfwd::cli {
namespace {

// Wall time per unit of work at interval t (Daly's exponential model, no restart time),
// written out independently of the implementation.
double wall_per_work(double t, double c, double m) { return m * (std::exp((t + c) / m) - 1) / t; }

TEST(IntervalAdvice, HandComputedValues) {
  // C = 2 s, M = 100 s: Young sqrt(2*2*100) = 20; Daly 20 * (1 + 0.1/3 + 0.01/9) - 2.
  EXPECT_DOUBLE_EQ(young_interval(2, 100), 20.0);
  EXPECT_NEAR(daly_interval(2, 100), 18.688889, 1e-6);
  // C = 5 min, M = 24 h: Young 120 min; Daly 120 min * (1 + sqrt(5/2880)/3 + (5/2880)/9) - 5.
  EXPECT_NEAR(young_interval(300, 86400), 7200.0, 1e-9);
  EXPECT_NEAR(daly_interval(300, 86400), 7200 * (1 + 0.0416667 / 3 + 0.00173611 / 9) - 300, 0.05);
  // C >= 2M: checkpoint every M.
  EXPECT_DOUBLE_EQ(daly_interval(200, 100), 100.0);
  EXPECT_DOUBLE_EQ(daly_interval(1000, 100), 100.0);
}

TEST(IntervalAdvice, PaperExample) {
  double c = (2e9 / 3) / 1e6;           // 666.67 s to write a third of 2 GB at 1 MB/s
  double m = 5 * 365 * 86400.0;         // five years
  double young = std::sqrt(2 * c * m);  // 458519 s, 5.3 days
  EXPECT_NEAR(young_interval(c, m), 458519.36, 0.01);
  // Daly's correction is small here (C/2M = 2.1e-6): a few minutes below Young's interval.
  double daly = daly_interval(c, m);
  EXPECT_NEAR(daly, young * (1 + std::sqrt(c / (2 * m)) / 3 + c / (2 * m) / 9) - c, 1e-6);
  EXPECT_LT(daly, young);
  EXPECT_GT(daly, young - c);
  // The paper's fraction of time lost to checkpoints, sqrt(C / (2 MTBF)) = 0.145%, is the
  // writing half; with the work redone after failures the loss is twice that.
  double writing = std::sqrt(c / (2 * m));
  EXPECT_NEAR(writing, 0.0014540, 1e-7);
  EXPECT_NEAR(lost_fraction(young, c, m), 2 * writing, 0.01 * 2 * writing);
  EXPECT_NEAR(lost_fraction(daly, c, m), 2 * writing, 0.01 * 2 * writing);
}

TEST(IntervalAdvice, LostFractionIsDalysModel) {
  for (double c : {1.0, 30.0, 600.0})
    for (double t : {10.0, 1000.0, 20000.0}) {
      double m = 86400;
      EXPECT_NEAR(lost_fraction(t, c, m), 1 - 1 / wall_per_work(t, c, m), 1e-12) << c << " " << t;
    }
  EXPECT_EQ(lost_fraction(0, 1, 100), 1.0);
}

// Daly's interval is (nearly) the one that loses the least time, also where C is not small
// against M: a scan of the model finds no interval that loses 0.1% less.
TEST(IntervalAdvice, DalyIntervalIsNearTheModelsOptimum) {
  double m = 1000;
  for (double c : {1.0, 10.0, 100.0, 500.0, 900.0, 1500.0}) {
    double best = 1e300, best_t = 0;
    for (int k = -8000; k < 4000; ++k) {
      double t = m * std::pow(10.0, k / 2000.0);
      double w = wall_per_work(t, c, m);
      if (w < best) best = w, best_t = t;
    }
    double daly = wall_per_work(daly_interval(c, m), c, m);
    EXPECT_LT(daly / best - 1, 1e-3)
        << "C " << c << ": Daly " << daly_interval(c, m) << ", the scan's optimum " << best_t;
    // Young's first-order interval is as good only while C is small against M.
    if (c <= 1) {
      EXPECT_LT(wall_per_work(young_interval(c, m), c, m) / best - 1, 1e-4);
    }
  }
}

TEST(IntervalAdvice, Durations) {
  std::string err;
  double s = 0;
  for (auto [text, want] : std::initializer_list<std::pair<const char*, double>>{{"24h", 86400},
                                                                                 {"3600s", 3600},
                                                                                 {"2d", 172800},
                                                                                 {"90m", 5400},
                                                                                 {"1.5h", 5400},
                                                                                 {"1w", 604800},
                                                                                 {"100", 100},
                                                                                 {"45min", 2700}}) {
    ASSERT_TRUE(parse_duration(text, &s, &err)) << text << ": " << err;
    EXPECT_DOUBLE_EQ(s, want) << text;
  }
  for (const char* bad : {"", "h", "-1h", "0", "3x", "1e400", "24 h", "nan"}) {
    EXPECT_FALSE(parse_duration(bad, &s, &err)) << bad;
    EXPECT_NE(err.find("e.g. 24h"), std::string::npos) << err;
  }
  EXPECT_EQ(human_duration(0.084), "0.08 s");
  EXPECT_EQ(human_duration(361), "6 min 1 s");
  EXPECT_EQ(human_duration(9000), "2 h 30 min");
  EXPECT_EQ(human_duration(3 * 86400), "3.0 d");
}

TEST(IntervalAdvice, FromAForwarderRecord) {
  // 2 checkpoints measured, 1 s blocked each, 1 GiB per checkpoint; the forwarder wrote
  // 512 MiB of containers in 2 s: 256 MiB/s, so 4 s to write a checkpoint directly.
  Json rec = {{"source", "forwarder"},    {"checkpoints_measured", 2},    {"ckpt_blocked_s", 1.0},
              {"ckpt_bytes", 1ull << 30}, {"bytes_stored", 512ull << 20}, {"time_write_s", 2.0}};
  Json a = interval_advice(rec, 86400);
  EXPECT_EQ(a["mtbf_s"], 86400.0);
  EXPECT_DOUBLE_EQ(a["with_ckptfwd"]["checkpoint_s"].get<double>(), 1.0);
  EXPECT_NEAR(a["with_ckptfwd"]["interval_s"].get<double>(), daly_interval(1, 86400), 1e-9);
  EXPECT_NEAR(a["without_ckptfwd"]["checkpoint_s"].get<double>(), 4.0, 1e-9);
  EXPECT_EQ(a["without_ckptfwd"]["checkpoint_bytes"], 1ull << 30);
  EXPECT_GT(a["without_ckptfwd"]["lost_fraction"].get<double>(),
            a["with_ckptfwd"]["lost_fraction"].get<double>());
  std::string text = interval_advice_text(a);
  EXPECT_NE(text.find("with ckptfwd:"), std::string::npos) << text;
  EXPECT_NE(text.find("C = 4.00 s estimated"), std::string::npos) << text;
  // Nothing measured yet: no advice, said so.
  Json none = interval_advice(Json{{"source", "forwarder"}}, 86400);
  EXPECT_TRUE(none["with_ckptfwd"].is_null());
  EXPECT_TRUE(none["without_ckptfwd"].is_null());
  EXPECT_NE(interval_advice_text(none).find("no complete checkpoint measured yet"),
            std::string::npos);
}

}  // namespace
}  // namespace ckptfwd::cli
