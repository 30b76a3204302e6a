//===- AttentionSvg.cpp - attention maps drawn as a standalone SVG --------===//
//
// The layout, in pixels, of one panel (one layer's head), left to right:
// the y tick labels, the ticks, the heat map (square cells, integer sizes),
// a gap, the colour bar and its tick labels; top to bottom: the title, the
// map, the ticks and the x tick labels. Panels repeat heads across and layers
// down, as the tutorial's plt.subplots(num_layers, num_heads).
//
//===----------------------------------------------------------------------===//

#include "runtime/AttentionSvg.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <locale>
#include <sstream>
#include <stdexcept>

namespace tfc::rt {
namespace {

//===- viridis -------------------------------------------------------------===//
// matplotlib's viridis (_cm_listed.py, _viridis_data; CC0, by Stéfan van der
// Walt and Nathaniel Smith): every 8th of its 256 entries (31 steps of 8,
// then two of 7 around the middle so the ends are entries 0 and 255), with
// the entry index; between them, linear interpolation (within 2/255 of the
// full table everywhere).
struct ViridisPoint {
  int index;
  double r, g, b;
};
constexpr ViridisPoint kViridis[] = {
    {0, 0.267004, 0.004874, 0.329415},   {8, 0.277018, 0.050344, 0.375715},
    {16, 0.282327, 0.094955, 0.417331},  {24, 0.282884, 0.135920, 0.453427},
    {32, 0.278826, 0.175490, 0.483397},  {40, 0.270595, 0.214069, 0.507052},
    {48, 0.258965, 0.251537, 0.524736},  {56, 0.244972, 0.287675, 0.537260},
    {64, 0.229739, 0.322361, 0.545706},  {72, 0.214298, 0.355619, 0.551184},
    {80, 0.199430, 0.387607, 0.554642},  {88, 0.185556, 0.418570, 0.556753},
    {96, 0.172719, 0.448791, 0.557885},  {104, 0.160665, 0.478540, 0.558115},
    {112, 0.149039, 0.508051, 0.557250}, {120, 0.137770, 0.537492, 0.554906},
    {128, 0.127568, 0.566949, 0.550556}, {135, 0.121148, 0.592739, 0.544641},
    {143, 0.120081, 0.622161, 0.534946}, {151, 0.130067, 0.651384, 0.521608},
    {159, 0.153894, 0.680203, 0.504172}, {167, 0.191090, 0.708366, 0.482284},
    {175, 0.239374, 0.735588, 0.455688}, {183, 0.296479, 0.761561, 0.424223},
    {191, 0.360741, 0.785964, 0.387814}, {199, 0.430983, 0.808473, 0.346476},
    {207, 0.506271, 0.828786, 0.300362}, {215, 0.585678, 0.846661, 0.249897},
    {223, 0.668054, 0.861999, 0.196293}, {231, 0.751884, 0.874951, 0.143228},
    {239, 0.835270, 0.886029, 0.102646}, {247, 0.916242, 0.896091, 0.100717},
    {255, 0.993248, 0.906157, 0.143936},
};
constexpr int kViridisPoints = sizeof(kViridis) / sizeof(kViridis[0]);

std::string hexColour(double r, double g, double b) {
  auto byte = [](double c) {
    return static_cast<unsigned>(std::lround(std::clamp(c, 0.0, 1.0) * 255.0));
  };
  char buf[8];
  std::snprintf(buf, sizeof buf, "#%02x%02x%02x", byte(r), byte(g), byte(b));
  return buf;
}

/// The colour of lookup-table entry `index` (0..255).
std::string viridisEntry(int index) {
  index = std::clamp(index, 0, 255);
  int i = 0;
  while (i + 2 < kViridisPoints && kViridis[i + 1].index <= index)
    ++i;
  const ViridisPoint &a = kViridis[i], &b = kViridis[i + 1];
  double f = double(index - a.index) / double(b.index - a.index);
  return hexColour(a.r + (b.r - a.r) * f, a.g + (b.g - a.g) * f, a.b + (b.b - a.b) * f);
}

/// matplotlib's Colormap.__call__ on a normalised value: int(t * N), N = 256,
/// t == 1 into the last entry, below 0 the first ("under"), above 1 the last.
int viridisIndex(double t) {
  if (!(t > 0))
    return 0;
  if (t >= 1)
    return 255;
  return std::min(255, static_cast<int>(t * 256.0));
}

//===- text ---------------------------------------------------------------===//

/// A label as drawn: its UTF-8 text split into display units (one code point,
/// or an escape such as "\n" for a control character), each with a width in
/// character cells.
struct Units {
  std::vector<std::string> text;
  std::vector<int> width;
};

constexpr const char *kReplacement = "\xEF\xBF\xBD"; // U+FFFD

/// Decodes UTF-8; what is not valid UTF-8, or not allowed in XML 1.0,
/// becomes U+FFFD; control characters become visible escapes.
Units toUnits(const std::string &s) {
  Units out;
  auto push = [&](std::string t, int w) {
    out.text.push_back(std::move(t));
    out.width.push_back(w);
  };
  size_t i = 0, n = s.size();
  while (i < n) {
    auto c = static_cast<unsigned char>(s[i]);
    if (c < 0x80) {
      if (c == '\n')
        push("\\n", 2);
      else if (c == '\t')
        push("\\t", 2);
      else if (c == '\r')
        push("\\r", 2);
      else if (c < 0x20 || c == 0x7f) {
        char buf[8];
        std::snprintf(buf, sizeof buf, "\\x%02x", c);
        push(buf, 4);
      } else
        push(std::string(1, char(c)), 1);
      ++i;
      continue;
    }
    int len = c >= 0xf0 ? 4 : c >= 0xe0 ? 3 : c >= 0xc0 ? 2 : 0;
    uint32_t cp = len == 4 ? c & 0x07 : len == 3 ? c & 0x0f : c & 0x1f;
    bool ok = len != 0 && c <= 0xf4 && i + len <= n;
    for (int k = 1; ok && k < len; ++k) {
      auto d = static_cast<unsigned char>(s[i + k]);
      if ((d & 0xc0) != 0x80)
        ok = false;
      else
        cp = (cp << 6) | (d & 0x3f);
    }
    static constexpr uint32_t kMin[] = {0, 0, 0x80, 0x800, 0x10000};
    ok = ok && cp >= kMin[len] && cp <= 0x10ffff && !(cp >= 0xd800 && cp <= 0xdfff) &&
         cp != 0xfffe && cp != 0xffff && !(cp >= 0x80 && cp <= 0x9f);
    if (!ok) {
      push(kReplacement, 1);
      ++i; // resynchronise on the next byte
      continue;
    }
    // East Asian scripts and emoji are about two Latin letters wide.
    push(s.substr(i, len), cp >= 0x2e80 ? 2 : 1);
    i += len;
  }
  return out;
}

std::string xmlEscape(const std::string &s) {
  std::string out;
  out.reserve(s.size());
  for (char c : s) {
    switch (c) {
    case '&': out += "&amp;"; break;
    case '<': out += "&lt;"; break;
    case '>': out += "&gt;"; break;
    case '"': out += "&quot;"; break;
    case '\'': out += "&#39;"; break;
    default: out += c;
    }
  }
  return out;
}

/// A label ready to draw: the whole text (for tooltips), the text shown at a
/// tick (at most kMaxShown character cells, then an ellipsis), both escaped,
/// and the shown text's width in character cells.
struct Label {
  std::string full, shown;
  int cells = 0;
};
constexpr int kMaxShown = 12;

Label makeLabel(const std::string &raw) {
  Units u = toUnits(raw);
  std::string full, shown;
  int total = 0;
  for (size_t k = 0; k < u.text.size(); ++k) {
    full += u.text[k];
    total += u.width[k];
  }
  Label l;
  l.full = xmlEscape(full);
  if (total <= kMaxShown) {
    l.shown = l.full;
    l.cells = total;
    return l;
  }
  int cells = 0;
  for (size_t k = 0; k < u.text.size() && cells + u.width[k] <= kMaxShown - 1; ++k) {
    shown += u.text[k];
    cells += u.width[k];
  }
  l.shown = xmlEscape(shown) + "\xE2\x80\xA6"; // U+2026
  l.cells = cells + 1;
  return l;
}

std::vector<Label> makeLabels(const std::vector<std::string> &raw, int64_t count) {
  std::vector<Label> out;
  out.reserve(size_t(count));
  for (int64_t k = 0; k < count; ++k)
    out.push_back(makeLabel(raw.empty() ? std::to_string(k) : raw[size_t(k)]));
  return out;
}

//===- numbers ------------------------------------------------------------===//

/// A stream that formats numbers the same way whatever the global locale.
struct Out : std::ostringstream {
  Out() { imbue(std::locale::classic()); }
};

/// A coordinate: at most `decimals` decimals, no trailing zeros.
std::string px(double v, int decimals = 2) {
  Out o;
  o.setf(std::ios::fixed);
  o.precision(decimals);
  o << v;
  std::string s = o.str();
  if (s.find('.') != std::string::npos) {
    while (s.back() == '0')
      s.pop_back();
    if (s.back() == '.')
      s.pop_back();
  }
  if (s == "-0")
    s = "0";
  return s;
}

/// A weight, exactly: nine significant digits round-trip a float.
std::string exact(float v) {
  Out o;
  o.precision(9);
  o << double(v);
  return o.str();
}

/// Colour-bar ticks from 0 to vmax: multiples of a 1, 2, 2.5 or 5 step,
/// about four of them, with as many decimals as the step needs.
std::vector<std::pair<double, std::string>> colourBarTicks(double vmax) {
  double raw = vmax / 4.0;
  double mag = std::pow(10.0, std::floor(std::log10(raw)));
  double norm = raw / mag;
  double m = norm <= 1 ? 1 : norm <= 2 ? 2 : norm <= 2.5 ? 2.5 : norm <= 5 ? 5 : 10;
  double step = m * mag;
  int decimals = std::max(0, -int(std::floor(std::log10(step) + 1e-9)));
  if (m == 2.5)
    ++decimals;
  std::vector<std::pair<double, std::string>> ticks;
  for (int k = 0; k * step <= vmax * (1 + 1e-9) && k < 100; ++k) {
    Out o;
    o.setf(std::ios::fixed);
    o.precision(decimals);
    o << k * step;
    ticks.emplace_back(k * step, o.str());
  }
  return ticks;
}

//===- checks -------------------------------------------------------------===//

[[noreturn]] void fail(const std::string &what) {
  throw std::invalid_argument("renderAttentionSvg: " + what);
}

std::string where(size_t l, size_t h) {
  return "layers[" + std::to_string(l) + "][" + std::to_string(h) + "] (Layer " +
         std::to_string(l + 1) + ", Head " + std::to_string(h + 1) + ")";
}

void check(const std::vector<std::vector<AttentionGrid>> &layers,
           const std::vector<std::string> &rowLabels, const std::vector<std::string> &colLabels) {
  if (layers.empty())
    fail("no layers: there is no attention map to draw");
  size_t heads = layers[0].size();
  if (heads == 0)
    fail("layers[0] has no heads: there is no attention map to draw");
  for (size_t l = 0; l < layers.size(); ++l)
    if (layers[l].size() != heads)
      fail("layers[" + std::to_string(l) + "] has " + std::to_string(layers[l].size()) +
           " heads, layers[0] has " + std::to_string(heads) +
           ": every layer must have the same number of heads");
  const AttentionGrid &first = layers[0][0];
  for (size_t l = 0; l < layers.size(); ++l)
    for (size_t h = 0; h < heads; ++h) {
      const AttentionGrid &g = layers[l][h];
      if (g.rows <= 0 || g.cols <= 0)
        fail(where(l, h) + " is " + std::to_string(g.rows) + "x" + std::to_string(g.cols) +
             ": rows and cols must be positive");
      if (g.rows != first.rows || g.cols != first.cols)
        fail(where(l, h) + " is " + std::to_string(g.rows) + "x" + std::to_string(g.cols) +
             ", layers[0][0] is " + std::to_string(first.rows) + "x" +
             std::to_string(first.cols) + ": every map must have the same shape");
      uint64_t size = g.weights.size(), cols = uint64_t(g.cols);
      if (size % cols != 0 || size / cols != uint64_t(g.rows))
        fail(where(l, h) + " has " + std::to_string(size) + " weights, expected rows*cols = " +
             std::to_string(g.rows) + "*" + std::to_string(g.cols));
    }
  if (!rowLabels.empty() && int64_t(rowLabels.size()) != first.rows)
    fail("rowLabels has " + std::to_string(rowLabels.size()) + " labels for " +
         std::to_string(first.rows) + " rows (queries); pass one per row, or none for indices");
  if (!colLabels.empty() && int64_t(colLabels.size()) != first.cols)
    fail("colLabels has " + std::to_string(colLabels.size()) + " labels for " +
         std::to_string(first.cols) + " cols (keys); pass one per column, or none for indices");
}

//===- layout -------------------------------------------------------------===//

constexpr int kTickFont = 10;   // tick labels, px
constexpr int kTitleFont = 12;  // "Layer l, Head h"
constexpr int kFigureFont = 16; // the figure's title
constexpr double kCharW = 6.0;  // estimated width of a character cell at kTickFont
constexpr int kTick = 4;        // tick length
constexpr int kTickGap = 2;     // between a tick and its label
constexpr int kMargin = 10;     // around the figure
constexpr int kPadL = 6, kPadR = 14, kPadBottom = 20; // around each panel
constexpr int kTitleH = 22;     // above each map
constexpr int kFigureTitleH = 30;
constexpr int kColourBarGap = 10, kColourBarW = 12;
constexpr int kMapTarget = 240; // the longer side of a map, about
constexpr int kMinCell = 4, kMaxCell = 80;
constexpr int kLabelPitch = kTickFont + 2; // least distance between tick labels

int64_t ceilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

} // namespace

std::string viridisHex(double t) {
  if (std::isnan(t))
    t = 0;
  return viridisEntry(viridisIndex(t));
}

std::string renderAttentionSvg(const std::vector<std::vector<AttentionGrid>> &layers,
                               const std::vector<std::string> &rowLabels,
                               const std::vector<std::string> &colLabels,
                               const std::string &title) {
  check(layers, rowLabels, colLabels);
  const int64_t numLayers = int64_t(layers.size()), numHeads = int64_t(layers[0].size());
  const int64_t rows = layers[0][0].rows, cols = layers[0][0].cols;
  const bool indexLabels = rowLabels.empty() && colLabels.empty();
  std::vector<Label> rowL = makeLabels(rowLabels, rows), colL = makeLabels(colLabels, cols);

  // Each map's colour scale: vmin = 0, vmax = its largest finite weight.
  std::vector<double> vmax(size_t(numLayers * numHeads), 1.0);
  for (int64_t l = 0; l < numLayers; ++l)
    for (int64_t h = 0; h < numHeads; ++h) {
      double m = -std::numeric_limits<double>::infinity();
      for (float w : layers[size_t(l)][size_t(h)].weights)
        if (std::isfinite(w))
          m = std::max(m, double(w));
      if (m > 0)
        vmax[size_t(l * numHeads + h)] = m;
    }
  std::vector<std::vector<std::pair<double, std::string>>> cbTicks;
  size_t cbLabelCells = 1;
  for (double v : vmax) {
    cbTicks.push_back(colourBarTicks(v));
    for (auto &t : cbTicks.back())
      cbLabelCells = std::max(cbLabelCells, t.second.size());
  }

  // Cells: square, whole pixels, the longer side of a map about kMapTarget.
  const int64_t cell = std::clamp<int64_t>(kMapTarget / std::max(rows, cols), kMinCell, kMaxCell);
  const int64_t mapW = cols * cell, mapH = rows * cell;

  int rowCells = 1, colCells = 1;
  for (auto &l : rowL)
    rowCells = std::max(rowCells, l.cells);
  for (auto &l : colL)
    colCells = std::max(colCells, l.cells);
  const double rowLabelW = rowCells * kCharW, colLabelW = colCells * kCharW;
  // Y labels: every yStep-th row, so that they do not overlap. X labels: level
  // when short (every xStep-th so they fit), else turned upright.
  const int64_t yStep = ceilDiv(kLabelPitch, cell);
  const bool xLevel = colLabelW + 2 <= cell || colCells <= 3;
  const int64_t xStep = xLevel ? ceilDiv(int64_t(std::ceil(colLabelW + 2)), cell)
                               : ceilDiv(kLabelPitch, cell);
  const double xLabelH = xLevel ? kTickFont + 2 : colLabelW + 2;

  const double mapLeft = kPadL + rowLabelW + kTickGap + kTick; // within a panel
  const double panelW = std::ceil(mapLeft + mapW + kColourBarGap + kColourBarW + kTick + kTickGap +
                                  cbLabelCells * kCharW + kPadR);
  const double panelH = std::ceil(kTitleH + mapH + kTick + kTickGap + xLabelH + kPadBottom);
  const double figTitleH = title.empty() ? 0 : kFigureTitleH;
  const double width = 2 * kMargin + numHeads * panelW;
  const double height = 2 * kMargin + figTitleH + numLayers * panelH;

  Out o;
  o << "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
    << "<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" width=\"" << px(width)
    << "\" height=\"" << px(height) << "\" viewBox=\"0 0 " << px(width) << ' ' << px(height)
    << "\" font-family=\"DejaVu Sans, Bitstream Vera Sans, Arial, Helvetica, sans-serif\">\n";
  std::string escapedTitle;
  {
    Units u = toUnits(title);
    std::string t;
    for (auto &s : u.text)
      t += s;
    escapedTitle = xmlEscape(t);
  }
  o << "<title>" << (title.empty() ? std::string("Attention maps") : escapedTitle)
    << "</title>\n";
  o << "<defs>\n<linearGradient id=\"tfc-viridis\" x1=\"0\" y1=\"1\" x2=\"0\" y2=\"0\">\n";
  for (const ViridisPoint &p : kViridis)
    o << "<stop offset=\"" << px(p.index / 255.0, 4) << "\" stop-color=\""
      << hexColour(p.r, p.g, p.b) << "\"/>\n";
  o << "</linearGradient>\n</defs>\n";
  o << "<rect width=\"100%\" height=\"100%\" fill=\"#ffffff\"/>\n";
  if (!title.empty())
    o << "<text class=\"figure-title\" x=\"" << px(width / 2) << "\" y=\"" << px(kMargin + 20)
      << "\" font-size=\"" << kFigureFont << "\" text-anchor=\"middle\">" << escapedTitle
      << "</text>\n";

  for (int64_t l = 0; l < numLayers; ++l)
    for (int64_t h = 0; h < numHeads; ++h) {
      const AttentionGrid &g = layers[size_t(l)][size_t(h)];
      const double vm = vmax[size_t(l * numHeads + h)];
      const double x0 = kMargin + h * panelW, y0 = kMargin + figTitleH + l * panelH;
      const double mx = x0 + mapLeft, my = y0 + kTitleH, mb = my + mapH;
      o << "<g class=\"panel\" id=\"layer" << l + 1 << "-head" << h + 1 << "\">\n";
      o << "<text class=\"panel-title\" x=\"" << px(mx + mapW / 2.0) << "\" y=\""
        << px(y0 + kTitleH - 7) << "\" font-size=\"" << kTitleFont
        << "\" text-anchor=\"middle\">Layer " << l + 1 << ", Head " << h + 1 << "</text>\n";

      // The heat map: row r (query r) at the bottom for r = 0 (origin='lower').
      o << "<g shape-rendering=\"crispEdges\">\n";
      for (int64_t r = 0; r < rows; ++r)
        for (int64_t c = 0; c < cols; ++c) {
          float w = g.weights[size_t(r * cols + c)];
          std::string fill = std::isnan(w) ? std::string("none")
                                           : viridisEntry(viridisIndex(double(w) / vm));
          o << "<rect class=\"cell\" x=\"" << px(mx + c * cell) << "\" y=\""
            << px(my + (rows - 1 - r) * cell) << "\" width=\"" << cell << "\" height=\"" << cell
            << "\" fill=\"" << fill << "\"><title>query " << r;
          if (!indexLabels)
            o << " (" << rowL[size_t(r)].full << ")";
          o << ", key " << c;
          if (!indexLabels)
            o << " (" << colL[size_t(c)].full << ")";
          o << ": " << exact(w) << "</title></rect>\n";
        }
      o << "</g>\n";
      o << "<rect class=\"frame\" x=\"" << px(mx) << "\" y=\"" << px(my) << "\" width=\"" << mapW
        << "\" height=\"" << mapH << "\" fill=\"none\" stroke=\"#000000\" stroke-width=\"0.8\"/>\n";

      // Ticks and their labels, the tokens.
      o << "<g class=\"ticks\" font-size=\"" << kTickFont
        << "\" stroke-width=\"0.8\" fill=\"#000000\">\n";
      for (int64_t r = 0; r < rows; r += yStep) {
        double y = my + (rows - 1 - r) * cell + cell / 2.0;
        o << "<line x1=\"" << px(mx - kTick) << "\" y1=\"" << px(y) << "\" x2=\"" << px(mx)
          << "\" y2=\"" << px(y) << "\" stroke=\"#000000\"/>"
          << "<text class=\"ylabel\" x=\"" << px(mx - kTick - kTickGap) << "\" y=\"" << px(y)
          << "\" text-anchor=\"end\" dominant-baseline=\"central\">" << rowL[size_t(r)].shown
          << "</text>\n";
      }
      for (int64_t c = 0; c < cols; c += xStep) {
        double x = mx + c * cell + cell / 2.0, ty = mb + kTick + kTickGap;
        o << "<line x1=\"" << px(x) << "\" y1=\"" << px(mb) << "\" x2=\"" << px(x) << "\" y2=\""
          << px(mb + kTick) << "\" stroke=\"#000000\"/>";
        if (xLevel)
          o << "<text class=\"xlabel\" x=\"" << px(x) << "\" y=\"" << px(ty + kTickFont * 0.8)
            << "\" text-anchor=\"middle\">";
        else
          o << "<text class=\"xlabel\" x=\"" << px(x) << "\" y=\"" << px(ty)
            << "\" transform=\"rotate(-90 " << px(x) << ' ' << px(ty)
            << ")\" text-anchor=\"end\" dominant-baseline=\"central\">";
        o << colL[size_t(c)].shown << "</text>\n";
      }

      // The colour bar: 0 at the bottom, the map's largest weight at the top.
      const double cx = mx + mapW + kColourBarGap;
      o << "<rect class=\"colourbar\" x=\"" << px(cx) << "\" y=\"" << px(my) << "\" width=\""
        << kColourBarW << "\" height=\"" << mapH
        << "\" fill=\"url(#tfc-viridis)\" stroke=\"#000000\" stroke-width=\"0.8\"/>\n";
      for (auto &[v, text] : cbTicks[size_t(l * numHeads + h)]) {
        double y = mb - v / vm * mapH;
        double xr = cx + kColourBarW;
        o << "<line x1=\"" << px(xr) << "\" y1=\"" << px(y) << "\" x2=\"" << px(xr + kTick)
          << "\" y2=\"" << px(y) << "\" stroke=\"#000000\"/>"
          << "<text x=\"" << px(xr + kTick + kTickGap) << "\" y=\"" << px(y)
          << "\" dominant-baseline=\"central\">" << text << "</text>\n";
      }
      o << "</g>\n</g>\n";
    }
  o << "</svg>\n";
  return o.str();
}

} // namespace tfc::rt
