// One sweep's trials as a table (sweep_trial_model.h).
#include "ringside/gui/sweep_trial_model.h"

#include <QCoreApplication>
#include <QFont>

#include <cmath>
#include <limits>

namespace ringside::gui {

namespace {

class SweepText {
  Q_DECLARE_TR_FUNCTIONS(SweepText)
};

enum Fixed { kState, kRung, kTrained, kBest, kRuns, kReason, kFixedColumns };

QString number(double x) { return QString::number(x, 'g', 4); }

// A parameter's JSON text as shown: strings without their quotes; with `shortNumbers`, a number
// to 4 significant digits (a drawn learning rate has 17).
QString paramText(const std::string& json, bool shortNumbers = false) {
  QString text = QString::fromStdString(json);
  bool isNumber = false;
  const double value = text.toDouble(&isNumber);
  if (isNumber && shortNumbers) return QString::number(value, 'g', 4);
  if (text.size() >= 2 && text.startsWith(QLatin1Char('"')) && text.endsWith(QLatin1Char('"'))) {
    text = text.mid(1, text.size() - 2);
  }
  return text;
}

QString unitWord(const v1::SweepSpec& spec) {
  const bool steps = (spec.early_stopping().has_asha() && spec.early_stopping().asha().unit() == v1::STEPS) ||
                     (spec.early_stopping().has_median() &&
                      spec.early_stopping().median().unit() == v1::STEPS);
  return steps ? SweepText::tr("steps") : SweepText::tr("epochs");
}

QString csvField(const QString& text) {
  if (!text.contains(QLatin1Char(',')) && !text.contains(QLatin1Char('"')) &&
      !text.contains(QLatin1Char('\n')) && !text.contains(QLatin1Char('\r'))) {
    return text;
  }
  QString quoted = text;
  quoted.replace(QLatin1String("\""), QLatin1String("\"\""));
  return QLatin1Char('"') + quoted + QLatin1Char('"');
}

}  // namespace

QString trialStateText(const v1::SweepTrial& trial) {
  if (trial.stopped_early()) return SweepText::tr("stopped early");
  switch (trial.state()) {
    case v1::QUEUED: return SweepText::tr("queued");
    case v1::STARTING: return SweepText::tr("starting");
    case v1::RUNNING: return SweepText::tr("running");
    case v1::COMPLETED: return SweepText::tr("completed");
    case v1::FAILED: return SweepText::tr("failed");
    case v1::STOPPED:
      if (trial.rungs_size() > 0 && !trial.rungs(trial.rungs_size() - 1).promoted()) {
        return SweepText::tr("paused at rung %1").arg(trial.rungs(trial.rungs_size() - 1).rung());
      }
      return SweepText::tr("stopped");
    default: return SweepText::tr("waiting");
  }
}

QString sweepStateText(v1::SweepState state) {
  switch (state) {
    case v1::SWEEP_RUNNING: return SweepText::tr("running");
    case v1::SWEEP_PAUSED: return SweepText::tr("paused");
    case v1::SWEEP_COMPLETED: return SweepText::tr("completed");
    case v1::SWEEP_STOPPED: return SweepText::tr("stopped");
    default: return SweepText::tr("unknown");
  }
}

SweepTrialModel::SweepTrialModel(QObject* parent) : QAbstractTableModel(parent) {}

void SweepTrialModel::setSweep(const v1::SweepInfo& sweep) {
  QStringList parameters;
  for (const v1::SweepParameter& parameter : sweep.spec().parameters()) {
    parameters << QString::fromStdString(parameter.name());
  }
  const bool reshape = parameters != parameters_ || sweep.sweep_id() != sweep_.sweep_id() ||
                       sweep.trials_size() != sweep_.trials_size();
  if (reshape) {
    beginResetModel();
    sweep_ = sweep;
    parameters_ = parameters;
    endResetModel();
    return;
  }
  sweep_ = sweep;
  if (rowCount() > 0) emit dataChanged(index(0, 0), index(rowCount() - 1, columnCount() - 1));
}

int SweepTrialModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : sweep_.trials_size();
}

int SweepTrialModel::columnCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : firstFixedColumn() + kFixedColumns;
}

QStringList SweepTrialModel::headers() const {
  QStringList out;
  for (int c = 0; c < columnCount(); ++c) out << headerData(c, Qt::Horizontal).toString();
  return out;
}

QVariant SweepTrialModel::headerData(int section, Qt::Orientation orientation, int role) const {
  if (orientation != Qt::Horizontal || role != Qt::DisplayRole) return {};
  if (section == 0) return SweepText::tr("Trial");
  if (section < firstFixedColumn()) return parameters_.value(section - 1);
  switch (section - firstFixedColumn()) {
    case kState: return SweepText::tr("State");
    case kRung: return SweepText::tr("Rung");
    case kTrained: return SweepText::tr("Trained (%1)").arg(unitWord(sweep_.spec()));
    case kBest:
      return SweepText::tr("Best %1").arg(QString::fromStdString(sweep_.spec().metric()));
    case kRuns: return SweepText::tr("Runs");
    case kReason: return SweepText::tr("Reason");
    default: return {};
  }
}

QString SweepTrialModel::text(int row, int column) const {
  if (row < 0 || row >= rowCount()) return {};
  const v1::SweepTrial& trial = sweep_.trials(row);
  if (column == 0) return QString::number(trial.trial());
  if (column < firstFixedColumn()) {
    auto it = trial.params().find(parameters_.value(column - 1).toStdString());
    return it == trial.params().end() ? QString() : paramText(it->second, /*shortNumbers=*/true);
  }
  switch (column - firstFixedColumn()) {
    case kState: return trialStateText(trial);
    case kRung:
      return trial.rungs_size() > 0 ? QString::number(trial.rungs(trial.rungs_size() - 1).rung())
                                    : QString();
    case kTrained: return trial.resource() > 0 ? number(trial.resource()) : QString();
    case kBest: return trial.has_best_value() ? number(trial.best_value()) : QString();
    case kRuns: return QString::number(trial.earlier_run_ids_size() + (trial.run_id().empty() ? 0 : 1));
    case kReason: return QString::fromStdString(trial.reason());
    default: return {};
  }
}

QVariant SweepTrialModel::sortValue(int row, int column) const {
  const v1::SweepTrial& trial = sweep_.trials(row);
  constexpr double kLast = std::numeric_limits<double>::infinity();
  if (column == 0) return static_cast<double>(trial.trial());
  if (column < firstFixedColumn()) {
    bool ok = false;
    const double value = text(row, column).toDouble(&ok);
    return ok ? QVariant(value) : QVariant(text(row, column));
  }
  switch (column - firstFixedColumn()) {
    case kRung:
      return trial.rungs_size() > 0 ? static_cast<double>(trial.rungs(trial.rungs_size() - 1).rung())
                                    : -1.0;
    case kTrained: return trial.resource();
    case kBest: {
      if (!trial.has_best_value()) return sweep_.spec().goal() == v1::MINIMIZE ? kLast : -kLast;
      return trial.best_value();
    }
    case kRuns: return static_cast<double>(trial.earlier_run_ids_size() + 1);
    default: return text(row, column);
  }
}

QVariant SweepTrialModel::data(const QModelIndex& index, int role) const {
  if (!index.isValid() || index.row() >= rowCount()) return {};
  const v1::SweepTrial& trial = sweep_.trials(index.row());
  switch (role) {
    case Qt::DisplayRole: return text(index.row(), index.column());
    case Qt::ToolTipRole:
      return index.column() == firstFixedColumn() + kReason ? text(index.row(), index.column())
                                                            : QVariant();
    case kSortRole: return sortValue(index.row(), index.column());
    case kRunIdRole: return QString::fromStdString(trial.run_id());
    case Qt::FontRole:
      if (static_cast<int>(trial.trial()) == sweep_.best_trial()) {
        QFont bold;
        bold.setBold(true);
        return bold;
      }
      return {};
    case Qt::TextAlignmentRole:
      return index.column() == firstFixedColumn() + kReason || index.column() == firstFixedColumn()
                 ? QVariant(Qt::AlignLeft | Qt::AlignVCenter)
                 : QVariant(Qt::AlignRight | Qt::AlignVCenter);
    default: return {};
  }
}

QString sweepTrialsCsv(const SweepTrialModel& model) {
  QStringList header;
  for (const QString& h : model.headers()) header << csvField(h);
  header << QStringLiteral("run_id");
  QString out = header.join(QLatin1Char(',')) + QLatin1Char('\n');
  for (int row = 0; row < model.rowCount(); ++row) {
    QStringList fields;
    for (int column = 0; column < model.columnCount(); ++column) {
      // Parameter values in full (the table rounds them to 4 digits).
      const QString header = model.headerData(column, Qt::Horizontal).toString();
      const auto& params = model.sweep().trials(row).params();
      const bool isParameter = column > 0 && column <= model.sweep().spec().parameters_size();
      auto it = params.find(header.toStdString());
      fields << csvField(isParameter && it != params.end() ? paramText(it->second)
                                                           : model.text(row, column));
    }
    fields << csvField(QString::fromStdString(model.sweep().trials(row).run_id()));
    out += fields.join(QLatin1Char(',')) + QLatin1Char('\n');
  }
  return out;
}

}  // namespace ringside::gui
