// Resume from the GUI (docs/dashboard.md, "Resume"): which runs can be resumed, the spec of the
// run that continues one, and the link between the two.
//
// A resumed run is a new run (its own run id, run directory and journal) whose spec is the
// original's with TrainerConfig.resume set to the original's checkpoint directory on the owner's
// node, so the trainer continues from the newest checkpoint there, at that checkpoint's step.
// The link is the tag "resumed-from:<original run id>" in the new run's spec (RunSpec.tags):
// it travels with the run through the agent's journal and the GUI's database, and any client of
// the protocol can read it; the history shows it as "resumed from <run>". The original's own
// "resumed-from:" tag is not copied: each run names the run it continues directly.
// Pure functions; no threads.
#pragma once

#include <QString>
#include <QStringList>
#include <optional>

#include "ringside/common/status.h"
#include "ringside/proto/ringside.pb.h"

namespace ringside::gui {

// The tag prefix that links a resumed run to the run it continues.
inline constexpr char kResumedFromTagPrefix[] = "resumed-from:";

// The run id a run's tags name after kResumedFromTagPrefix ("" when none). `tags`: the spec's
// tags, or RunRecord.tags split at commas (surrounding spaces are ignored).
QString resumedFromRunId(const QStringList& tags);
QString resumedFromRunId(const QString& commaSeparatedTags);

// Whether a run in this state with this spec has something to resume from: a trainer run that
// was stopped (the trainer writes a checkpoint on SIGTERM) or that failed with periodic
// checkpoints on (checkpoint_every > 0; a failure before the first one leaves none, and the
// resumed run then fails at once naming the empty directory). Custom commands, running and
// completed runs: false.
bool hasResumableCheckpoint(v1::RunState state, const v1::RunSpec& spec);

// The directory on the owner's node that holds the run's checkpoints: TrainerConfig's
// checkpoint_dir (default "checkpoints") under RunInfo.run_dir unless it is absolute. Errors:
// InvalidArgument when the run is not a trainer run, its config cannot be read, or run_dir is
// empty (an agent that did not report it).
Result<QString> checkpointDirOfRun(const v1::RunInfo& run);

// The spec of the run that continues `original`: its spec with the trainer's resume set to
// checkpointDirOfRun(original) (config_json of an old spec converted to TrainerJob.config), the
// tags without any "resumed-from:" tag plus "resumed-from:<original's run id>", and the same
// hosts (GPU picks cleared: a multi-node launch's pre-flight picks them again). Errors: those
// of checkpointDirOfRun.
Result<v1::RunSpec> resumedRunSpec(const v1::RunInfo& original);

}  // namespace ringside::gui
