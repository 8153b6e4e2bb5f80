// The catch-up state machine of one node connection (docs/design.md decision 2; docs/protocol.md,
// "Sequence numbers and catch-up"), without sockets: AgentConnection's network thread feeds it
// what arrived (run lists, fetch replies, live seqs, lost requests) and sends the fetches it asks
// for. Per run it keeps the highest seq delivered to the GUI and whether the run's journal must be
// fetched, so that every entry reaches the GUI exactly once and in seq order:
//  - a run the GUI holds (trackRun) or, with autoTrackRuns, any run seen in a list or a live event
//    is "followed": its journal is fetched page by page from the last delivered seq whenever the
//    node's list shows more, a live seq skips ahead (PUB dropped something), or a fetch was lost;
//  - a live entry is delivered only when it is the next seq of its run; one at or below the last
//    delivered seq is dropped, and live entries that arrive while a page is in flight are dropped
//    too (the journal has them) and fetched after the page when the page did not reach them;
//  - a live metric sample or log line of a run the GUI has not learned of from the agent (tracked,
//    listed, or introduced by a run state event) is dropped, never delivered: the agent is asked
//    for its run list, and a run the list shows is followed and fetched from its journal, so
//    nothing is lost (docs/design.md decision 2); entries of runs the agent does not list are
//    refused (runListComplete names them). Holding such entries instead would keep, in the GUI, a
//    copy of what the journal already keeps, with a bound to choose and nothing gained.
//
// Thread-safety: none; one thread (the connection's network thread) owns an instance.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>

#include "ringside/proto/ringside.pb.h"

namespace ringside::gui {

class CatchUp {
 public:
  // Distinct unknown runs whose dropped entries are counted by id; more are counted together.
  static constexpr size_t kMaxUnknownRunsNamed = 16;

  // Sends one fetch_run_data request for `runId` after `afterSeq`; returns false when it could
  // not be sent (then the run is fetched again on a later startFetches).
  using SendFetch = std::function<bool(const std::string& runId, uint64_t afterSeq)>;

  // Catch-up state of one run.
  struct Run {
    uint64_t applied = 0;            // every seq <= applied was delivered (or the GUI had it)
    bool followed = false;           // trackRun() or autoTrackRuns: gaps are fetched
    bool needsFetch = false;         // fetch from `applied` on the next startFetches
    bool fetching = false;           // a page request is in flight
    uint64_t seenWhileFetching = 0;  // highest live seq dropped during the fetch
  };

  // What a fetch reply meant (onFetchReply).
  struct FetchOutcome {
    enum class Kind {
      kIgnored,    // the run is no longer tracked, or the reply holds no page
      kForgotten,  // NOT_FOUND: the agent deleted the run (retention); it is no longer tracked
      kFailed,     // another ErrorReply: `error` says what; fetched again when the node comes
                   // online again or a gap shows
      kPage,       // `page` holds the entries not delivered before
    };
    Kind kind = Kind::kIgnored;
    std::string error;             // kFailed: the agent's message
    v1::FetchRunDataReply page;    // kPage: entries with seq <= the run's mark removed
    std::optional<uint64_t> done;  // kPage with more == false: caught up to this seq
  };

  // autoTrackRuns: follow runs the GUI does not track yet (from seq 0) when a list or a live
  // event shows them. maxConcurrentFetches: pages in flight at once across all runs.
  explicit CatchUp(bool autoTrackRuns, int maxConcurrentFetches = 4);

  // The GUI holds `runId` up to `lastSeq`: follow it from there (a lower mark than the current
  // one is ignored). A run new to this object is fetched once, in case its list came first.
  void trackRun(const std::string& runId, uint64_t lastSeq);
  // Forgets the run: no more fetches; a page of it still in flight is ignored.
  void untrackRun(const std::string& runId);
  // The GUI deleted the run (MetricsStore::deleteRun): untrackRun, and from now on its live
  // entries are dropped and run lists do not make it followed again, also with autoTrackRuns,
  // until trackRun. Holds only ids the GUI deleted and this node showed: bounded by the node's
  // own run count (its retention).
  void ignoreRun(const std::string& runId);

  // Every page request in flight is lost (the sockets were replaced, or the node went offline):
  // those runs are fetched again from their mark.
  void fetchesLost();
  // The page request of `runId` got no reply in time: fetched again from its mark.
  void fetchLost(const std::string& runId);
  // The run list could not be had (not sent, timed out, or an error reply): fetch every followed
  // run that is not being fetched, as the list might have shown more.
  void listFailed();

  // One page of the node's run list: marks followed runs whose journal holds more than their
  // mark (and, with autoTrackRuns, starts following runs with entries).
  void onRunList(const v1::ListRunsReply& list);

  // Sends a fetch for each run that needs one, up to the concurrency limit. Call when the node is
  // online (and again later: what could not be sent or did not fit stays due).
  void startFetches(const SendFetch& send);

  // The reply to the page request of `runId` (a FetchRunDataReply or an ErrorReply). For a page
  // with `more`, asks `send` for the next page at once.
  FetchOutcome onFetchReply(const std::string& runId, const v1::Envelope& reply,
                            const SendFetch& send);

  // Whether the live entry `seq` of `runId` goes to the GUI now: true when it is the run's next
  // seq (or the run is not followed and the seq is new), and then it becomes the run's mark.
  // A seq past the next one marks the run for a fetch (the journal has the gap and this entry).
  // `introducesRun`: the entry is a run state event, whose RunInfo makes the run known. Any other
  // entry of a run not known yet (not tracked, listed or introduced) is dropped and counted, and
  // wantsRunList() turns true.
  bool acceptLive(const std::string& runId, uint64_t seq, bool introducesRun = false);

  // True when live entries of unknown runs were dropped since the last run list was asked for:
  // the connection should list the node's runs again.
  bool wantsRunList() const { return wantsRunList_; }
  // The connection sends the first page of a run list request now.
  void runListRequested();
  // Runs (and their dropped live entries, counted) that were unknown when the list was requested
  // and that the complete list (its last page arrived) does not show either; forgotten then.
  // Unknown runs the list did show are followed now, and fetched like any listed run.
  std::map<std::string, uint64_t> runListComplete();

  // The state of `runId`, or nothing when it is not tracked. For tests and diagnostics.
  std::optional<Run> run(const std::string& runId) const;

 private:
  bool requestPage(const std::string& runId, Run& run, const SendFetch& send);

  bool autoTrackRuns_;
  int maxConcurrentFetches_;
  std::map<std::string, Run> runs_;
  // Runs a run list showed that have no entry in runs_ (not followed, nothing live yet).
  std::set<std::string> listed_;
  // Runs the GUI deleted (ignoreRun).
  std::set<std::string> ignored_;
  // Dropped live entries of unknown runs since the last list request (`unknown_`), and those of
  // the list in flight (`unknownAtList_`); the key "" (no valid run id) counts the entries of the
  // runs past kMaxUnknownRunsNamed.
  std::map<std::string, uint64_t> unknown_;
  std::map<std::string, uint64_t> unknownAtList_;
  bool wantsRunList_ = false;
  // False when no run needs a fetch (set with every Run::needsFetch, cleared by startFetches).
  bool maybeDue_ = false;
};

}  // namespace ringside::gui
