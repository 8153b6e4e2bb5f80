// DashboardTab's store queries and what their answers become: the charted series (x as step,
// fractional epoch or time since the start), the run's progress facts for the ETA, the log tail,
// and the per-rank view (the table's latest values and the heatmap's whole series).
#include <QComboBox>
#include <QLabel>
#include <QPlainTextEdit>
#include <QScrollBar>

#include <algorithm>
#include <array>
#include <cmath>
#include <memory>

#include "ringside/common/metric_names.h"
#include "ringside/common/run_spec.h"
#include "ringside/gui/clipped_text.h"
#include "ringside/gui/controller.h"
#include "ringside/gui/run_progress.h"
#include "ringside/gui/straggler_history.h"
#include "ringside/gui/when_ready.h"
#include "ringside/gui/widgets/bucket_timings_view.h"
#include "ringside/gui/widgets/dashboard_tab.h"
#include "ringside/gui/widgets/metric_chart.h"
#include "ringside/gui/widgets/rank_view.h"

namespace ringside::gui {

namespace {

// A metric name of metric_names.h as the store's key.
QString key(const char* metricName) { return QString::fromLatin1(metricName); }

std::vector<SeriesPoint> shifted(std::vector<SeriesPoint> points, double origin) {
  if (origin != 0) {
    for (SeriesPoint& point : points) point.x -= origin;
  }
  return points;
}

}  // namespace

SeriesX DashboardTab::xMode() const { return static_cast<SeriesX>(xMode_->currentIndex()); }

void DashboardTab::fetch() {
  // Epochs are fractional (step / steps per epoch) once the run's facts are known; until then
  // (or for a command that reports none) the 0-based epoch each sample carries.
  const SeriesX x = xMode() == SeriesX::kEpoch && progress_.stepsPerEpoch.value_or(0) > 0
                        ? SeriesX::kStep
                        : xMode();
  chartX_ = x;
  buckets_->fetch(controller_.store(), runId_, SeriesX::kStep);
  std::vector<std::pair<QString, SeriesX>> requests;
  for (const char* name :
       {metric::kTrainLoss, metric::kTestLoss, metric::kTestAccuracy, metric::kTrainSamplesPerS,
        metric::kComputeMs, metric::kExposedCommMs, metric::kAllreduceMs, metric::kCommBusbw}) {
    requests.emplace_back(key(name), x);
  }
  // For the ETA (runProgress): the run's facts and the last train step, by step.
  for (const char* name : {metric::kRunTotalSteps, metric::kRunStepsPerEpoch}) {
    requests.emplace_back(key(name), SeriesX::kStep);
  }
  if (x != SeriesX::kStep) requests.emplace_back(key(metric::kTrainLoss), SeriesX::kStep);
  MetricsStore& store = controller_.store();
  const int generation = generation_;
  const int expected = static_cast<int>(requests.size()) + 2;
  auto answered = std::make_shared<int>(0);
  auto done = [this, generation, expected, answered] {
    if (generation != generation_) return;
    --inFlight_;
    if (++*answered == expected) applySeries();
  };
  inFlight_ += expected;
  whenReady(this, store.run(runId_), [this, generation, done](Result<RunRecord> run) {
    if (generation == generation_ && run.isOk()) applyRun(run.value());
    done();
  });
  whenReady(this, store.logTail(runId_, kLogTailLines),
            [this, generation, done](Result<std::vector<v1::LogLine>> lines) {
              if (generation == generation_ && lines.isOk()) {
                QStringList text;
                for (const v1::LogLine& line : lines.value()) {
                  text << elidedLine(QString::fromStdString(line.text()), kLogViewLineChars);
                }
                const QString joined = text.join(QLatin1Char('\n'));
                if (joined != log_->toPlainText()) {
                  QScrollBar* bar = log_->verticalScrollBar();
                  const bool atEnd = bar->value() == bar->maximum();
                  log_->setPlainText(joined);
                  if (atEnd) bar->setValue(bar->maximum());
                }
              }
              done();
            });
  for (const auto& [name, seriesX] : requests) {
    const auto key = std::make_pair(name, static_cast<int>(seriesX));
    whenReady(this, store.series(runId_, name, -1, seriesX),
              [this, generation, done, key](Result<std::vector<SeriesPoint>> points) {
                if (generation == generation_) {
                  if (points.isOk()) {
                    fetched_[key] = std::move(points.value());
                  } else {
                    message_->setText(QString::fromStdString(points.status().message()));
                  }
                }
                done();
              });
  }
}

std::vector<SeriesPoint> DashboardTab::take(const QString& name) {
  auto it = fetched_.find({name, static_cast<int>(chartX_)});
  if (it == fetched_.end()) return {};
  if (chartX_ == SeriesX::kWallTime) return shifted(it->second, xOrigin());
  if (xMode() == SeriesX::kEpoch && chartX_ == SeriesX::kStep) {
    return stepsToEpochs(it->second, progress_.stepsPerEpoch.value_or(0));
  }
  return it->second;
}

double DashboardTab::xOrigin() const {
  if (run_ && run_->startTime > 0) return run_->startTime;
  if (run_ && run_->createdTime > 0) return run_->createdTime;
  auto it = fetched_.find({key(metric::kTrainLoss), static_cast<int>(SeriesX::kWallTime)});
  return it != fetched_.end() && !it->second.empty() ? it->second.front().x : 0.0;
}

void DashboardTab::applySeries() {
  // The run's facts first: the epoch axis needs its steps per epoch.
  const auto byStep = [&](const char* name) -> const std::vector<SeriesPoint>& {
    static const std::vector<SeriesPoint> kEmpty;
    auto it = fetched_.find({key(name), static_cast<int>(SeriesX::kStep)});
    return it == fetched_.end() ? kEmpty : it->second;
  };
  const auto& perEpoch = byStep(metric::kRunStepsPerEpoch);
  if (!perEpoch.empty() && std::isfinite(perEpoch.back().y)) {
    progress_.stepsPerEpoch = static_cast<int64_t>(perEpoch.back().y);
  }
  // Whole epochs were fetched before the facts were known: fetch again for fractional ones.
  if (xMode() == SeriesX::kEpoch && chartX_ == SeriesX::kEpoch &&
      progress_.stepsPerEpoch.value_or(0) > 0) {
    dirty_ = true;
  }

  rawLoss_ = take(key(metric::kTrainLoss));
  loss_->setSeries(rawLossName(), rawLoss_, QColor(0x20, 0x9f, 0xdf), true);
  applySmoothing();
  loss_->setSeries(testLossName(), take(key(metric::kTestLoss)), QColor(0xe6, 0x7e, 0x22));
  accuracy_->setSeries(tr("test accuracy"), take(key(metric::kTestAccuracy)),
                       QColor(0x27, 0xae, 0x60));
  throughput_->setSeries(tr("samples/s"), take(key(metric::kTrainSamplesPerS)),
                         QColor(0x6d, 0x5f, 0xd5));
  stepTime_->setSeries(tr("compute"), take(key(metric::kComputeMs)), QColor(0x20, 0x9f, 0xdf));
  stepTime_->setSeries(tr("exposed communication"), take(key(metric::kExposedCommMs)),
                       QColor(0xe7, 0x4c, 0x3c));
  allreduce_->setSeries(tr("all-reduce"), take(key(metric::kAllreduceMs)),
                        QColor(0xbf, 0x59, 0x3e));
  busbw_->setSeries(tr("busbw"), take(key(metric::kCommBusbw)), QColor(0x2c, 0xa0, 0x8f));

  // Progress for the ETA: the last train step, the run's facts (the last sample of each, at the
  // step the run started from) and the latest samples/s.
  const auto& lossBySteps = byStep(metric::kTrainLoss);
  if (!lossBySteps.empty()) progress_.stepsDone = static_cast<int64_t>(lossBySteps.back().x);
  const auto& totalSteps = byStep(metric::kRunTotalSteps);
  if (!totalSteps.empty() && std::isfinite(totalSteps.back().y)) {
    progress_.totalSteps = static_cast<int64_t>(totalSteps.back().y);
    progress_.firstStep = static_cast<int64_t>(totalSteps.back().x);
  }
  progress_.samplesPerSecond.reset();
  auto samples = fetched_.find({key(metric::kTrainSamplesPerS), static_cast<int>(chartX_)});
  if (samples != fetched_.end() && !samples->second.empty()) {
    progress_.samplesPerSecond = samples->second.back().y;
  }
  updateClock();
}

void DashboardTab::fetchRanks() {
  sinceRankFetch_.restart();
  rankDirty_ = false;  // again after the run's data changes
  const int generation = generation_;
  ++inFlight_;
  whenReady(this, controller_.store().metricRanks(runId_, key(metric::kStepMs)),
            [this, generation](Result<std::vector<int>> ranks) {
              if (generation != generation_) return;
              --inFlight_;
              if (!ranks.isOk()) return;
              std::vector<int> perRank;
              for (int rank : ranks.value()) {
                if (rank >= 0) perRank.push_back(rank);
              }
              if (!perRank.empty()) {
                fetchRankSeries(perRank);
                fetchStraggler();
              }
            });
}

void DashboardTab::fetchStraggler() {
  // The agent's verdicts: seven global series (straggler_history.h), the latest for the sentence
  // and all of them for the timeline.
  auto verdicts = std::make_shared<StragglerSeries>();
  constexpr size_t kSeries = StragglerSeries::kNames.size();
  auto pending = std::make_shared<size_t>(kSeries);
  inFlight_ += static_cast<int>(kSeries);
  const int generation = generation_;
  for (size_t i = 0; i < kSeries; ++i) {
    whenReady(this, controller_.store().series(runId_, key(StragglerSeries::kNames[i]), -1),
              [this, generation, verdicts, pending, i](Result<std::vector<SeriesPoint>> points) {
                if (generation != generation_) return;
                --inFlight_;
                if (points.isOk()) verdicts->series[i] = std::move(points).value();
                if (--*pending > 0) return;
                rankView_->setStraggler(latestStraggler(*verdicts));
                rankView_->setStragglerHistory(stragglerSpans(*verdicts));
              });
  }
}

void DashboardTab::fetchRankSeries(const std::vector<int>& perRank) {
  const QString nodeId = run_ ? run_->nodeId : controller_.nodeOfRun(runId_);
  const auto node = controller_.node(nodeId);
  const QString nodeName = node && !node->record.name.isEmpty() ? node->record.name : nodeId;
  v1::RunSpec spec;
  if (run_ && !run_->spec.isEmpty()) {
    spec.ParseFromArray(run_->spec.constData(), static_cast<int>(run_->spec.size()));
  }
  // Every rank's whole series: the table shows the last values, the heatmap all of them.
  auto stats = std::make_shared<std::vector<RankStat>>();
  auto timings = std::make_shared<std::vector<RankTimingSeries>>();
  for (int rank : perRank) {
    const QString host = hostOfRank(spec, rank, nodeName);
    stats->push_back(RankStat{rank, host, {}, {}});
    timings->push_back(RankTimingSeries{rank, host, {}, {}});
  }
  enum Series { kStep, kExposed, kCompute };
  auto pending = std::make_shared<int>(static_cast<int>(3 * perRank.size()));
  inFlight_ += *pending;
  const int generation = generation_;
  for (size_t i = 0; i < perRank.size(); ++i) {
    for (Series series : {kStep, kExposed, kCompute}) {
      const char* name = series == kStep      ? metric::kStepMs
                         : series == kExposed ? metric::kExposedCommMs
                                              : metric::kComputeMs;
      whenReady(this, controller_.store().series(runId_, key(name), perRank[i]),
                [this, generation, stats, timings, pending, i,
                 series](Result<std::vector<SeriesPoint>> points) {
                  if (generation != generation_) return;
                  --inFlight_;
                  if (points.isOk()) {
                    std::vector<SeriesPoint>& values = points.value();
                    if (series != kCompute && !values.empty() && std::isfinite(values.back().y)) {
                      auto& field =
                          series == kExposed ? (*stats)[i].exposedCommMs : (*stats)[i].stepMs;
                      field = values.back().y;
                    }
                    if (series == kExposed) (*timings)[i].waitMs = std::move(values);
                    if (series == kCompute) (*timings)[i].computeMs = std::move(values);
                  }
                  if (--*pending == 0) applyRanks(*stats, std::move(*timings));
                });
    }
  }
}

void DashboardTab::applyRanks(const std::vector<RankStat>& stats,
                              std::vector<RankTimingSeries> timings) {
  rankView_->setRanks(stats);
  const int generation = generation_;
  ++inFlight_;
  whenReady(this, buildRankHeatmapAsync(std::move(timings)),
            [this, generation](RankHeatmap heatmap) {
              if (generation != generation_) return;
              --inFlight_;
              rankView_->setHeatmap(std::move(heatmap));
              // A long run's series take longer to read and bin: fetch no more often than every
              // 4 times what this round took, so the store's thread stays mostly free for
              // ingestion.
              rankFetchEveryMs_ = std::max(kRankFetchEveryMs, 4 * sinceRankFetch_.elapsed());
            });
}

}  // namespace ringside::gui
