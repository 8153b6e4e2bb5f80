#include "gui_harness.h"

#include <QDir>
#include <QEventLoop>
#include <QFile>
#include <QTimer>
#include <chrono>
#include <fstream>
#include <map>

#include "ringside/common/agent_ready.h"
#include "ringside/gui/metrics_store.h"

namespace ringside::bench {

namespace {

double unixNow() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

bool isEnded(v1::RunState state) {
  return state == v1::COMPLETED || state == v1::FAILED || state == v1::STOPPED;
}

// The placeholder every rank runs: world rank 0 writes the environment a rank gets, atomically,
// then every rank sleeps until the stop ends it.
constexpr const char* kPlaceholderScript =
    "if [ \"$OMPI_COMM_WORLD_RANK\" = 0 ]; then\n"
    "  printf '%s\\n%s\\n' \"$RINGSIDE_AGENT_ENDPOINT\" \"$RINGSIDE_RUN_ID\" > \"$1.tmp\" &&\n"
    "  mv \"$1.tmp\" \"$1\"\n"
    "fi\n"
    "exec sleep 600\n";

// Quotes `text` for a POSIX shell.
std::string shellQuoted(const std::string& text) {
  std::string quoted = "'";
  for (char c : text) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return quoted + "'";
}

}  // namespace

GuiHarness::GuiHarness(const std::string& agentPath, const std::string& dataDir,
                       const std::string& nvmlLibrary)
    : dataDir_(dataDir),
      scriptPath_(dataDir + "/placeholder.sh"),
      agentPath_(agentPath),
      nvmlLibrary_(nvmlLibrary) {
  gui::ControllerOptions options;
  options.dataDir = QString::fromStdString(dataDir);
  // The Controller starts its local agent with arguments of its own; another NVML is added by a
  // wrapper that start() writes (the agent takes its options before a subcommand too).
  options.agentBinary = QString::fromStdString(
      nvmlLibrary.empty() ? agentPath : dataDir + "/agent-with-nvml/ringside-agent");
  options.startLocalAgent = true;
  controller_ = std::make_unique<gui::Controller>(options);
  QObject::connect(controller_.get(), &gui::Controller::errorMessage,
                   [this](const QString& message) { errors_.append(message); });
  // Direct: runs on the store's thread right after each commit, so the time is the row's.
  QObject::connect(
      &controller_->store(), &gui::MetricsStore::samplesIngested, &controller_->store(),
      [this](const QString& runId, qint64 newSamples, quint64 lastSeq) {
        const IngestEvent event{unixNow(), Clock::now(), newSamples, lastSeq};
        std::lock_guard lock(mutex_);
        ingest_[runId].push_back(event);
        stored_[runId] += newSamples;
      },
      Qt::DirectConnection);
}

GuiHarness::~GuiHarness() { controller_.reset(); }

bool GuiHarness::spinUntil(const std::function<bool()>& done, int64_t timeoutMs) {
  if (done()) return true;
  QEventLoop loop;
  QTimer tick;
  const auto deadline = Clock::now() + std::chrono::milliseconds(timeoutMs);
  QObject::connect(&tick, &QTimer::timeout, &loop, [&] {
    if (done() || Clock::now() >= deadline) loop.quit();
  });
  tick.start(5);
  loop.exec();
  return done();
}

Status GuiHarness::start() {
  QDir().mkpath(QString::fromStdString(dataDir_));
  {
    std::ofstream script(scriptPath_);
    script << kPlaceholderScript;
    if (!script) return Status::ioError("cannot write " + scriptPath_);
  }
  if (!nvmlLibrary_.empty()) {
    const std::string wrapper = dataDir_ + "/agent-with-nvml/ringside-agent";
    QDir().mkpath(QString::fromStdString(dataDir_ + "/agent-with-nvml"));
    {
      std::ofstream script(wrapper);
      script << "#!/bin/sh\nexec " << shellQuoted(agentPath_) << " --nvml-library "
             << shellQuoted(nvmlLibrary_) << " \"$@\"\n";
      if (!script) return Status::ioError("cannot write " + wrapper);
    }
    QFile::setPermissions(QString::fromStdString(wrapper),
                          QFile::ReadOwner | QFile::WriteOwner | QFile::ExeOwner);
  }
  QString failure;
  QObject::connect(controller_.get(), &gui::Controller::startFailed,
                   [&failure](const QString& message) { failure = message; });
  if (Status s = controller_->start(); !s.isOk()) return s;
  auto localReady = [this] {
    for (const gui::NodeView& node : controller_->nodes()) {
      if (node.local && node.state == gui::NodeState::Online && node.info.has_value()) {
        nodeId_ = node.record.nodeId;
        return true;
      }
    }
    return false;
  };
  if (!spinUntil([&] { return localReady() || !failure.isEmpty() || !errors_.isEmpty(); }, 60000)) {
    return Status::internal("the GUI's local agent did not come online within 60 s: " +
                            (failure + errors_.join(QStringLiteral("; "))).toStdString());
  }
  auto ready = readAgentReady(dataDir_ + "/local-agent/gui-local-agent.ready.json");
  if (ready.isOk()) agentPid_ = ready->pid();
  return Status::ok();
}

Result<PlaceholderRun> GuiHarness::launchPlaceholder(const QString& name, int worldSize) {
  const QString envFile =
      QString::fromStdString(dataDir_) + QStringLiteral("/") + name + QStringLiteral(".env");
  gui::RunForm form;
  form.name = name;
  // A script job that takes GPU slots: a custom command takes CPU cores, fewer than the ranks on
  // a small machine. Its stdout.log is not parsed for metrics (nor is the trainer's).
  form.job = gui::RunForm::Job::kPython;
  form.pythonInterpreter = QStringLiteral("/bin/sh");
  form.pythonScript = QString::fromStdString(scriptPath_);
  form.pythonArgs = gui::joinCommandLine({envFile});
  form.pythonUseGpus = true;
  form.nodeIds = {nodeId_};
  form.ranksPerNode = worldSize;
  form.hangTimeoutSeconds = 0;
  QString runId, failure;
  auto launched = QObject::connect(controller_.get(), &gui::Controller::runLaunched,
                                   [&runId](const QString& id) { runId = id; });
  auto failed = QObject::connect(controller_.get(), &gui::Controller::launchFailed,
                                 [&failure](const QString& message) { failure = message; });
  controller_->launch(form);
  spinUntil([&] { return !runId.isEmpty() || !failure.isEmpty(); }, 30000);
  QObject::disconnect(launched);
  QObject::disconnect(failed);
  if (runId.isEmpty()) {
    return Status::internal(
        "launching the placeholder run failed: " +
        (failure.isEmpty() ? QStringLiteral("no answer within 30 s") : failure).toStdString());
  }
  QFile file(envFile);
  spinUntil([&] { return file.exists(); }, 30000);
  if (!file.open(QIODevice::ReadOnly)) {
    return Status::internal("the placeholder run " + runId.toStdString() + " did not write " +
                            envFile.toStdString() + " within 30 s");
  }
  const QByteArray text = file.readAll();
  const QList<QByteArray> lines = text.split('\n');
  if (lines.size() < 2 || QString::fromUtf8(lines[1]) != runId || lines[0].isEmpty()) {
    return Status::internal("the placeholder run " + runId.toStdString() +
                            " got an unexpected environment: " + text.toStdString());
  }
  const std::string stderrLog =
      dataDir_ + "/local-agent/runs/" + runId.toStdString() + "/stderr.log";
  if (!QFile::exists(QString::fromStdString(stderrLog))) {
    return Status::internal("the placeholder run has no " + stderrLog);
  }
  return PlaceholderRun{runId, lines[0].toStdString(), stderrLog};
}

void GuiHarness::stopRun(const QString& runId) {
  bool ended = false;
  auto changed = QObject::connect(controller_.get(), &gui::Controller::runStateChanged,
                                  [&](const QString& id, v1::RunState state) {
                                    if (id == runId && isEnded(state)) ended = true;
                                  });
  controller_->stopRun(runId, 1.0);
  spinUntil([&] { return ended; }, 20000);
  QObject::disconnect(changed);
}

int64_t GuiHarness::storedSamples(const QString& runId) const {
  std::lock_guard lock(mutex_);
  auto it = stored_.find(runId);
  return it == stored_.end() ? 0 : it->second;
}

int64_t GuiHarness::storedLogLines(const QString& runId) {
  QFuture<Result<int64_t>> count = controller_->store().logLineCount(runId);
  spinUntil([&] { return count.isFinished(); }, 60000);
  if (!count.isFinished()) return -1;
  const Result<int64_t> result = count.result();
  return result.isOk() ? *result : -1;
}

std::vector<IngestEvent> GuiHarness::ingestEvents(const QString& runId) const {
  std::lock_guard lock(mutex_);
  auto it = ingest_.find(runId);
  return it == ingest_.end() ? std::vector<IngestEvent>{} : it->second;
}

std::string GuiHarness::databasePath() const {
  return controller_->store().databasePath().toStdString();
}

}  // namespace ringside::bench
