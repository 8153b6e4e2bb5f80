#include "ringside/gui/widgets/straggler_timeline.h"

#include <QHelpEvent>
#include <QLocale>
#include <QPainter>
#include <QToolTip>

#include <algorithm>
#include <cmath>

namespace ringside::gui {

namespace {

constexpr int kBandHeight = 18;
constexpr int kMargin = 2;

}  // namespace

StragglerTimeline::StragglerTimeline(QWidget* parent) : QWidget(parent) {
  setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Fixed);
  setMouseTracking(true);
}

QSize StragglerTimeline::sizeHint() const {
  return {400, kBandHeight + fontMetrics().height() + 3 * kMargin};
}

QSize StragglerTimeline::minimumSizeHint() const { return {120, sizeHint().height()}; }

void StragglerTimeline::setSpans(std::vector<StragglerSpan> spans, QMap<int, QString> nodeOfRank) {
  spans_ = std::move(spans);
  nodeOfRank_ = std::move(nodeOfRank);
  update();
}

QColor StragglerTimeline::colorOfRank(int rank) {
  if (rank < 0) return QColor(0xe4, 0xe6, 0xe8);
  // Hues a golden-ratio step apart, so that neighbouring ranks differ clearly.
  const double hue = std::fmod(0.02 + rank * 0.618033988749895, 1.0);
  return QColor::fromHsvF(static_cast<float>(hue), 0.65f, 0.88f);
}

QRect StragglerTimeline::bandRect() const {
  const int labelWidth = fontMetrics().horizontalAdvance(tr("Straggler over the run")) + 8;
  return {labelWidth, kMargin, std::max(1, width() - labelWidth - kMargin), kBandHeight};
}

double StragglerTimeline::xOf(int64_t step) const {
  const QRect band = bandRect();
  if (spans_.empty()) return band.left();
  const double first = static_cast<double>(spans_.front().firstStep);
  const double last = static_cast<double>(spans_.back().endStep);
  if (!(last > first)) return band.left();
  return band.left() + (static_cast<double>(step) - first) / (last - first) * band.width();
}

std::optional<size_t> StragglerTimeline::spanAt(QPoint position) const {
  const QRect band = bandRect();
  if (spans_.empty() || position.y() < band.top() || position.y() > band.bottom()) {
    return std::nullopt;
  }
  for (size_t i = 0; i < spans_.size(); ++i) {
    const double left = xOf(spans_[i].firstStep);
    // The last span (or a span of one verdict at the end) is at least one pixel wide.
    const double right = std::max(xOf(spans_[i].endStep), left + 1.0);
    if (position.x() >= std::floor(left) && position.x() < std::ceil(right)) return i;
  }
  return std::nullopt;
}

QString StragglerTimeline::toolTipAt(QPoint position) const {
  const auto index = spanAt(position);
  if (!index) return {};
  const StragglerSpan& span = spans_[*index];
  const QString steps = tr("steps %1 to %2")
                            .arg(QLocale().toString(static_cast<qlonglong>(span.firstStep)),
                                 QLocale().toString(static_cast<qlonglong>(span.endStep)));
  if (span.rank < 0) return tr("%1: no straggler").arg(steps);
  const QString node = nodeOfRank_.value(span.rank);
  // A rank number is an id, not a quantity: never grouped.
  const QString who = node.isEmpty() ? tr("rank %1").arg(QString::number(span.rank))
                                     : tr("rank %1 on %2").arg(QString::number(span.rank), node);
  const QString stage = span.stage == 1   ? tr("data")
                        : span.stage == 3 ? tr("waiting for a CPU")
                                          : tr("compute");
  if (span.maxCostShare) {
    return tr("%1: %2 held the group back (%3), up to %4 % of the step time")
        .arg(steps, who, stage, QLocale().toString(std::round(*span.maxCostShare * 100.0), 'f', 0));
  }
  return tr("%1: %2 held the group back (%3)").arg(steps, who, stage);
}

bool StragglerTimeline::event(QEvent* event) {
  if (event->type() == QEvent::ToolTip) {
    auto* help = static_cast<QHelpEvent*>(event);
    const QString text = toolTipAt(help->pos());
    if (text.isEmpty()) {
      QToolTip::hideText();
      event->ignore();
    } else {
      QToolTip::showText(help->globalPos(), text, this);
    }
    return true;
  }
  return QWidget::event(event);
}

void StragglerTimeline::paintEvent(QPaintEvent*) {
  QPainter painter(this);
  const QRect band = bandRect();
  painter.setPen(palette().color(QPalette::WindowText));
  painter.drawText(QRect(0, band.top(), band.left() - 4, band.height()),
                   Qt::AlignRight | Qt::AlignVCenter, tr("Straggler over the run"));
  if (spans_.empty()) {
    painter.setPen(palette().color(QPalette::PlaceholderText));
    painter.drawText(band, Qt::AlignLeft | Qt::AlignVCenter, tr("no straggler verdict yet"));
    return;
  }
  for (const StragglerSpan& span : spans_) {
    const double left = xOf(span.firstStep);
    const double right = std::max(xOf(span.endStep), left + 1.0);
    const QRectF rect(left, band.top(), right - left, band.height());
    painter.fillRect(rect, colorOfRank(span.rank));
    if (span.rank < 0) continue;
    const QString label = tr("rank %1").arg(QString::number(span.rank));
    if (painter.fontMetrics().horizontalAdvance(label) + 6 <= rect.width()) {
      painter.setPen(Qt::black);
      painter.drawText(rect, Qt::AlignCenter, label);
    }
  }
  painter.setPen(palette().color(QPalette::Mid));
  painter.drawRect(band.adjusted(0, 0, -1, -1));
  // The step axis: the first and the last verdict's step.
  painter.setPen(palette().color(QPalette::WindowText));
  const QRect axis(band.left(), band.bottom() + kMargin, band.width(), fontMetrics().height());
  painter.drawText(
      axis, Qt::AlignLeft | Qt::AlignTop,
      tr("step %1").arg(QLocale().toString(static_cast<qlonglong>(spans_.front().firstStep))));
  painter.drawText(
      axis, Qt::AlignRight | Qt::AlignTop,
      tr("step %1").arg(QLocale().toString(static_cast<qlonglong>(spans_.back().endStep))));
}

}  // namespace ringside::gui
