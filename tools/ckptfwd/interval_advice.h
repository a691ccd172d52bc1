// How often to checkpoint (docs/cli.md, "How often to checkpoint"): the interval between
// checkpoints that loses the least time to writing them and to redoing the work lost at
// a failure, from the checkpoint cost C and the mean time between failures M.
//
//   Young (J. W. Young, "A first order approximation to the optimum checkpoint interval",
//   Commun. ACM 17(9), 1974):        T = sqrt(2 C M)
//   Daly (J. T. Daly, "A higher order estimate of the optimum checkpoint interval for
//   restart dumps", Future Gener. Comput. Syst. 22(3), 2006), used here:
//       T = sqrt(2 C M) * [1 + (1/3) sqrt(C / (2M)) + (1/9) (C / (2M))] - C   for C < 2M
//       T = M                                                               otherwise
//   Expected fraction of time lost at interval T, Daly's model of exponentially
//   distributed failures with the restart time left out (ckptfwd does not measure it):
//       wall time per unit of work  W = M (exp((T + C) / M) - 1) / T
//       lost = 1 - 1 / W
//   For C small against M this is C/T + T/(2M), which at Young's T is sqrt(2 C / M):
//   half of it writing checkpoints, sqrt(C / (2M)) (the figure D. Ibtesham, D. Arnold and
//   K. B. Ferreira, "Checkpoint Compression: Its Limitations and Comparisons with other
//   Optimizations", give as the fraction of time lost to checkpoints), half redoing the
//   work lost at failures.
#pragma once
#include <string>

#include "common/json_text.h"

namespace ckptfwd::cli {

double young_interval(double c, double mtbf);
double daly_interval(double c, double mtbf);
// Daly's exponential model at interval t (see above); 1 when t <= 0.
double lost_fraction(double t, double c, double mtbf);

// "24h", "3600s", "2d", "90m", "1.5h", "1w", or plain seconds: > 0 seconds. False with
// *err saying what is wrong.
bool parse_duration(const std::string& text, double* seconds, std::string* err);
// "45 s", "6 min 1 s", "2 h 30 min", "3.2 d".
std::string human_duration(double seconds);

// The advice for one forwarder stats record (its keys checkpoints_measured,
// ckpt_blocked_s, ckpt_bytes, bytes_stored, time_write_s), as documented in docs/json.md
// ("advice"): with ckptfwd, C is the measured blocked time; without, C is estimated as a
// checkpoint's bytes written at the store write bandwidth the forwarder measured (its
// container bytes over its container write time, fsync included), null when unknown.
Json interval_advice(const Json& record, double mtbf_s);
// The same for people: a few lines, each indented by two spaces.
std::string interval_advice_text(const Json& advice);

}  // namespace ckptfwd::cli
