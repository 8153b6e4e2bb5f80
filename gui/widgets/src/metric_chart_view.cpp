// MetricChart's interaction: the chart view's mouse, wheel and key handling (zoom, pan, reset),
// the hover read-out of the nearest drawn point, and the context menu.
#include <QChart>
#include <QContextMenuEvent>
#include <QKeyEvent>
#include <QLabel>
#include <QLocale>
#include <QMenu>
#include <QMouseEvent>
#include <QRubberBand>
#include <QWheelEvent>

#include <algorithm>
#include <cmath>

#include "metric_chart_parts.h"

namespace ringside::gui {

namespace {

// A right button that moves less than this (pixels) before its release opens the context menu;
// more is a pan.
constexpr double kClickSlop = 4.0;

// A value as the read-out shows it: 6 significant digits in the default locale (a decimal comma
// in German), as the axis labels (QChart::localizeNumbers).
QString formatNumber(double value) { return QLocale().toString(value, 'g', 6); }

}  // namespace

// ---- View

MetricChart::View::View(QChart* chart, MetricChart* owner)
    : QChartView(chart, owner), owner_(owner) {
  setRenderHint(QPainter::Antialiasing, false);
  setMouseTracking(true);
  setFocusPolicy(Qt::StrongFocus);
  setRubberBand(QChartView::NoRubberBand);  // ours, so the decimation sees every change
}

void MetricChart::View::mousePressEvent(QMouseEvent* event) {
  if (event->button() == Qt::LeftButton) {
    bandOrigin_ = event->position().toPoint();
    if (band_ == nullptr) band_ = new QRubberBand(QRubberBand::Rectangle, this);
    band_->setGeometry(QRect(bandOrigin_, QSize()));
    band_->show();
  } else if (event->button() == Qt::RightButton || event->button() == Qt::MiddleButton) {
    panning_ = true;
    panOrigin_ = event->position();
    pressAt_ = event->position();
    dragged_ = 0;
  }
  event->accept();
}

void MetricChart::View::mouseMoveEvent(QMouseEvent* event) {
  if (band_ != nullptr && band_->isVisible()) {
    band_->setGeometry(QRect(bandOrigin_, event->position().toPoint()).normalized());
  } else if (panning_) {
    const QRectF plot = owner_->chart_->plotArea();
    const QPointF delta = event->position() - panOrigin_;
    panOrigin_ = event->position();
    dragged_ = std::max(dragged_, (event->position() - pressAt_).manhattanLength());
    if (plot.width() > 0 && plot.height() > 0) {
      owner_->pan(-delta.x() / plot.width(), delta.y() / plot.height());
    }
  }
  owner_->updateHover(event->position());
  event->accept();
}

void MetricChart::View::mouseReleaseEvent(QMouseEvent* event) {
  if (event->button() == Qt::LeftButton && band_ != nullptr && band_->isVisible()) {
    band_->hide();
    const QRect rect = band_->geometry();
    if (rect.width() > 4) {
      const SeriesPoint a = owner_->valueAt(rect.bottomLeft());
      const SeriesPoint b = owner_->valueAt(rect.topRight());
      owner_->setXRange(a.x, b.x);
      if (rect.height() > 4) owner_->setYRange(a.y, b.y);
      emit owner_->viewChanged();
    }
  }
  if (event->button() == Qt::RightButton && panning_ && dragged_ < kClickSlop) {
    panning_ = false;
    owner_->showContextMenu(event->globalPosition().toPoint());
  }
  panning_ = false;
  event->accept();
}

void MetricChart::View::mouseDoubleClickEvent(QMouseEvent* event) {
  owner_->resetZoom();
  emit owner_->viewChanged();
  event->accept();
}

void MetricChart::View::wheelEvent(QWheelEvent* event) {
  const double notches = event->angleDelta().y() / 120.0;
  if (notches != 0) {
    const SeriesPoint center = owner_->valueAt(event->position());
    owner_->zoom(std::pow(0.8, notches), QPointF(center.x, center.y));
  }
  event->accept();
}

void MetricChart::View::keyPressEvent(QKeyEvent* event) {
  switch (event->key()) {
    case Qt::Key_Left:
      owner_->pan(-0.1, 0);
      break;
    case Qt::Key_Right:
      owner_->pan(0.1, 0);
      break;
    case Qt::Key_Up:
      owner_->pan(0, 0.1);
      break;
    case Qt::Key_Down:
      owner_->pan(0, -0.1);
      break;
    case Qt::Key_Plus:
    case Qt::Key_Equal:
    case Qt::Key_Minus: {
      const auto [x0, x1] = owner_->shownX_;
      const bool log = owner_->logX_;
      const double middle = fromAxis((toAxis(x0, log) + toAxis(x1, log)) / 2, log);
      owner_->zoom(event->key() == Qt::Key_Minus ? 1.25 : 0.8, QPointF(middle, 0));
      break;
    }
    case Qt::Key_Home:
    case Qt::Key_Escape:
      owner_->resetZoom();
      emit owner_->viewChanged();
      break;
    default:
      QChartView::keyPressEvent(event);
      return;
  }
  event->accept();
}

void MetricChart::View::contextMenuEvent(QContextMenuEvent* event) {
  // The mouse's right button pans when dragged: its menu opens on a release without a drag
  // (mouseReleaseEvent). The menu key opens it at once, at the view's centre.
  if (event->reason() != QContextMenuEvent::Mouse) {
    owner_->showContextMenu(mapToGlobal(rect().center()));
  }
  event->accept();
}

void MetricChart::View::leaveEvent(QEvent* event) {
  owner_->readout_->clear();
  QChartView::leaveEvent(event);
}

// ---- context menu

void MetricChart::showContextMenu(QPoint globalPosition) { menu_->popup(globalPosition); }

// ---- coordinates and hover

PlotMapping MetricChart::mapping() const {
  return PlotMapping{
      .plot = chart_->plotArea(), .x = shownX_, .y = shownY_, .logX = logX_, .logY = logY_};
}

QPointF MetricChart::positionOf(SeriesPoint point) const {
  const QPointF scene = chart_->mapToScene(mapping().toPixel(point));
  return view_->mapFromScene(scene);
}

SeriesPoint MetricChart::valueAt(QPointF position) const {
  const QPointF scene = view_->mapToScene(position.toPoint());
  return mapping().fromPixel(chart_->mapFromScene(scene));
}

std::optional<HoverPoint> MetricChart::nearestPoint(QPointF position, double maxPixels) const {
  const QPointF pixel = chart_->mapFromScene(view_->mapToScene(position.toPoint()));
  const PlotMapping map = mapping();
  std::optional<HoverPoint> best;
  double bestDistance = maxPixels * maxPixels;
  for (const auto& series : series_) {
    if (series->faint && series_.size() > 1) continue;  // read the smoothed line, not the raw
    for (const SeriesPoint& point : series->shown) {
      if (point.x < shownX_.first || point.x > shownX_.second) continue;
      SeriesPoint value = point;
      const QPointF at = map.toPixel(point);
      const double dx = at.x() - pixel.x();
      const double dy = at.y() - pixel.y();
      const double distance = dx * dx + dy * dy;
      if (distance <= bestDistance) {
        bestDistance = distance;
        if (stacked_) {
          // Read out the series' own value, not the stacked sum.
          const auto& own = series->points;
          auto it = std::lower_bound(
              own.begin(), own.end(), point.x,
              [](const SeriesPoint& candidate, double x) { return candidate.x < x; });
          if (it != own.end() && it->x == point.x) value = *it;
        }
        best = HoverPoint{series->name, value};
      }
    }
  }
  return best;
}

void MetricChart::updateHover(QPointF position) {
  const auto found = nearestPoint(position);
  if (!found) {
    readout_->clear();
    return;
  }
  readout_->setText(
      tr("%1: x = %2, y = %3")
          .arg(found->series, formatNumber(found->point.x), formatNumber(found->point.y)));
}

QString MetricChart::readoutText() const { return readout_->text(); }

}  // namespace ringside::gui
