// What `ckptfwd report` says about a job, as one JSON document (docs/json.md, `ckptfwd
// report --json`): the store's checkpoints (store_checkpoints.h) with their bytes per
// node and per rank, and the stats records every forwarder of the store's jobs wrote
// beside its log (STORE/logs/<job>.<node>.stats.jsonl: a "checkpoint" record as each
// checkpoint of its node completed, a "forwarder" record and "variable" records at exit).
//   - waves: the checkpoint records, the last one of each (a record is written again when
//     a later exit wait adds blocked time), in time order;
//   - nodes: per node its forwarders' counters summed (files and bytes committed, bytes
//     stored) and its checkpoints' blocked and durable times;
//   - variables: per variable key, over every forwarder's variable records: bytes in and
//     out and the ratio;
//   - size: a checkpoint's bytes per rank (min, mean, max over the files of the complete
//     checkpoints), per node, the store's growth per checkpoint (a complete checkpoint's
//     stored bytes, mean), the store when 1 or 3 checkpoints are kept (CKPTFWD_KEEP for
//     files rewritten under one name, `ckptfwd prune --keep` for numbered steps), and the
//     most one node held of one checkpoint against CKPTFWD_STAGE_LIMIT (staging memory);
//   - advice: the interval advice (interval_advice.h) per node's forwarder record, when
//     an MTBF is given.
// A stats line that is not JSON, or a record of another kind, is skipped and counted in
// "problems" (never a failure of the report: the stats are a by-product of the job).
#pragma once
#include <string>

#include "common/json_text.h"
#include "store.h"

namespace ckptfwd::cli {

// mtbf_s <= 0: no advice. stage_limit: CKPTFWD_STAGE_LIMIT in bytes (0: unset).
Json report_model(const Store& st, double mtbf_s, uint64_t stage_limit);

}  // namespace ckptfwd::cli
