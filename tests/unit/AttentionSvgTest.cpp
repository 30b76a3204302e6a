//===- AttentionSvgTest.cpp - attention maps as SVG -----------------------===//
//
// The document is well-formed XML (a small checker below), has one cell per
// weight laid out layers by rows and heads by columns with the first query at
// the bottom, titles every map "Layer l, Head h", labels both axes with the
// escaped tokens, colours with viridis from 0 to each map's maximum, and
// rejects every malformed argument with std::invalid_argument.
//
// With TFC_ATTENTION_SVG_EXAMPLE=FILE set, the example figure (2 layers, 4
// heads, 16 tokens) is also written to FILE for a look.
//
//===----------------------------------------------------------------------===//

#include "runtime/AttentionSvg.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <map>
#include <random>
#include <regex>
#include <stdexcept>
#include <string>
#include <vector>

using tfc::rt::AttentionGrid;
using tfc::rt::renderAttentionSvg;
using tfc::rt::viridisHex;

namespace {

using Layers = std::vector<std::vector<AttentionGrid>>;

//===- a tiny XML checker -------------------------------------------------===//

/// An entity reference at s[i] == '&': one of XML's five, or a character
/// reference.
bool validEntity(const std::string &s, size_t i) {
  size_t semi = s.find(';', i);
  if (semi == std::string::npos || semi - i > 10)
    return false;
  std::string name = s.substr(i + 1, semi - i - 1);
  if (name == "amp" || name == "lt" || name == "gt" || name == "quot" || name == "apos")
    return true;
  if (name.size() >= 2 && name[0] == '#')
    return std::all_of(name.begin() + 1, name.end(), ::isdigit) ||
           (name[1] == 'x' && name.size() > 2 &&
            std::all_of(name.begin() + 2, name.end(), ::isxdigit));
  return false;
}

bool isNameChar(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == ':' ||
         c == '.';
}

/// "" when `doc` is well-formed: one root element, every tag closed in order,
/// quoted attributes without '<', only valid entity references, no control
/// characters. Otherwise what is wrong, and where.
std::string xmlProblem(const std::string &doc, std::string *rootName = nullptr) {
  std::vector<std::string> stack;
  int roots = 0;
  size_t i = 0, n = doc.size();
  auto at = [&](size_t p) { return " at offset " + std::to_string(p); };
  auto text = [&](size_t from, size_t to) -> std::string {
    for (size_t k = from; k < to; ++k) {
      auto c = static_cast<unsigned char>(doc[k]);
      if (c < 0x20 && c != '\n' && c != '\t' && c != '\r')
        return "control character" + at(k);
      if (c == '&' && !validEntity(doc, k))
        return "bare '&'" + at(k);
    }
    return "";
  };
  while (i < n) {
    size_t lt = doc.find('<', i);
    size_t end = lt == std::string::npos ? n : lt;
    if (std::string p = text(i, end); !p.empty())
      return p;
    if (stack.empty() && doc.find_first_not_of(" \t\r\n", i) < end)
      return "text outside the root element" + at(i);
    if (lt == std::string::npos)
      break;
    if (doc.compare(lt, 5, "<?xml") == 0) {
      if (lt != 0)
        return "XML declaration not at the start" + at(lt);
      size_t q = doc.find("?>", lt);
      if (q == std::string::npos)
        return "unterminated declaration";
      i = q + 2;
      continue;
    }
    if (doc.compare(lt, 4, "<!--") == 0) {
      size_t q = doc.find("-->", lt);
      if (q == std::string::npos)
        return "unterminated comment";
      i = q + 3;
      continue;
    }
    if (doc.compare(lt, 2, "</") == 0) {
      size_t p = lt + 2, s = p;
      while (p < n && isNameChar(doc[p]))
        ++p;
      std::string name = doc.substr(s, p - s);
      while (p < n && std::isspace(static_cast<unsigned char>(doc[p])))
        ++p;
      if (p >= n || doc[p] != '>')
        return "malformed end tag" + at(lt);
      if (stack.empty() || stack.back() != name)
        return "</" + name + "> does not close <" + (stack.empty() ? "" : stack.back()) + ">" +
               at(lt);
      stack.pop_back();
      i = p + 1;
      continue;
    }
    size_t p = lt + 1, s = p;
    while (p < n && isNameChar(doc[p]))
      ++p;
    std::string name = doc.substr(s, p - s);
    if (name.empty())
      return "bare '<'" + at(lt);
    std::map<std::string, bool> attrs;
    for (;;) {
      size_t ws = p;
      while (p < n && std::isspace(static_cast<unsigned char>(doc[p])))
        ++p;
      if (p >= n)
        return "unterminated tag <" + name + ">";
      if (doc[p] == '>' || doc.compare(p, 2, "/>") == 0)
        break;
      if (p == ws)
        return "no space before an attribute" + at(p);
      size_t a = p;
      while (p < n && isNameChar(doc[p]))
        ++p;
      std::string attr = doc.substr(a, p - a);
      if (attr.empty() || p >= n || doc[p] != '=' || p + 1 >= n ||
          (doc[p + 1] != '"' && doc[p + 1] != '\''))
        return "malformed attribute in <" + name + ">" + at(a);
      if (attrs[attr])
        return "duplicate attribute " + attr + at(a);
      attrs[attr] = true;
      char quote = doc[p + 1];
      size_t close = doc.find(quote, p + 2);
      if (close == std::string::npos)
        return "unterminated attribute value" + at(a);
      if (doc.find('<', p + 2) < close)
        return "'<' in an attribute value" + at(a);
      if (std::string bad = text(p + 2, close); !bad.empty())
        return bad;
      p = close + 1;
    }
    bool selfClosing = doc[p] == '/';
    if (stack.empty()) {
      if (++roots > 1)
        return "a second root element <" + name + ">" + at(lt);
      if (rootName)
        *rootName = name;
    }
    if (!selfClosing)
      stack.push_back(name);
    i = p + (selfClosing ? 2 : 1);
  }
  if (!stack.empty())
    return "<" + stack.back() + "> is never closed";
  if (roots != 1)
    return "no root element";
  return "";
}

TEST(XmlChecker, CatchesWhatItShould) {
  EXPECT_EQ(xmlProblem("<a><b/><c x=\"1\">t &amp; u</c></a>"), "");
  EXPECT_NE(xmlProblem("<a><b></a>"), "");
  EXPECT_NE(xmlProblem("<a>"), "");
  EXPECT_NE(xmlProblem("<a>x < y</a>"), "");
  EXPECT_NE(xmlProblem("<a>x & y</a>"), "");
  EXPECT_NE(xmlProblem("<a x=\"<\"/>"), "");
  EXPECT_NE(xmlProblem("<a/><b/>"), "");
  EXPECT_NE(xmlProblem("<a x=\"1\" x=\"2\"/>"), "");
  EXPECT_NE(xmlProblem("<a>\x01</a>"), "");
}

//===- helpers ------------------------------------------------------------===//

/// rows x cols, each row a softmax of normal logits scaled by `sharpness`.
AttentionGrid randomGrid(std::mt19937 &rng, int64_t rows, int64_t cols, double sharpness = 2) {
  std::normal_distribution<double> normal;
  AttentionGrid g{rows, cols, {}};
  for (int64_t r = 0; r < rows; ++r) {
    std::vector<double> e(static_cast<size_t>(cols));
    double sum = 0;
    for (auto &v : e)
      sum += v = std::exp(sharpness * normal(rng));
    for (double v : e)
      g.weights.push_back(float(v / sum));
  }
  return g;
}

Layers randomLayers(int layers, int heads, int64_t rows, int64_t cols, unsigned seed = 1) {
  std::mt19937 rng(seed);
  Layers out(static_cast<size_t>(layers));
  for (auto &l : out)
    for (int h = 0; h < heads; ++h)
      l.push_back(randomGrid(rng, rows, cols));
  return out;
}

struct Cell {
  double x, y, w, h;
  std::string fill, tooltip;
  int64_t query, key;
};

/// The heat-map cells in document order.
std::vector<Cell> cells(const std::string &svg) {
  static const std::regex re("<rect class=\"cell\" x=\"([-0-9.]+)\" y=\"([-0-9.]+)\" "
                             "width=\"([0-9.]+)\" height=\"([0-9.]+)\" fill=\"([^\"]*)\">"
                             "<title>(query ([0-9]+)[^<]*?, key ([0-9]+)[^<]*)</title></rect>");
  std::vector<Cell> out;
  for (auto it = std::sregex_iterator(svg.begin(), svg.end(), re); it != std::sregex_iterator();
       ++it) {
    const std::smatch &m = *it;
    out.push_back({std::stod(m[1]), std::stod(m[2]), std::stod(m[3]), std::stod(m[4]), m[5], m[6],
                   std::stoll(m[7]), std::stoll(m[8])});
  }
  return out;
}

size_t count(const std::string &s, const std::string &what) {
  size_t n = 0;
  for (size_t p = s.find(what); p != std::string::npos; p = s.find(what, p + 1))
    ++n;
  return n;
}

/// The part of the document that draws layer l, head h (1-based).
std::string panel(const std::string &svg, int l, int h) {
  std::string open = "<g class=\"panel\" id=\"layer" + std::to_string(l) + "-head" +
                     std::to_string(h) + "\">";
  size_t from = svg.find(open);
  if (from == std::string::npos)
    return "";
  size_t to = svg.find("<g class=\"panel\"", from + 1);
  return svg.substr(from, to == std::string::npos ? std::string::npos : to - from);
}

/// The root element's width and height.
std::pair<double, double> size(const std::string &svg) {
  std::smatch m;
  static const std::regex re("<svg [^>]*width=\"([0-9.]+)\" height=\"([0-9.]+)\"");
  if (!std::regex_search(svg, m, re))
    return {0, 0};
  return {std::stod(m[1]), std::stod(m[2])};
}

std::vector<std::string> tokens(int n) {
  std::vector<std::string> out;
  for (int k = 0; k < n; ++k)
    out.push_back("t" + std::to_string(k));
  return out;
}

template <typename F> std::string errorOf(F &&f) {
  try {
    f();
  } catch (const std::invalid_argument &e) {
    return e.what();
  }
  return "(no exception)";
}

//===- the document -------------------------------------------------------===//

TEST(AttentionSvg, WellFormedStandaloneSvg) {
  std::string svg = renderAttentionSvg(randomLayers(2, 3, 5, 5), tokens(5), tokens(5), "Reverse");
  std::string root;
  EXPECT_EQ(xmlProblem(svg, &root), "");
  EXPECT_EQ(root, "svg");
  EXPECT_EQ(svg.rfind("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n", 0), 0u);
  EXPECT_NE(svg.find("xmlns=\"http://www.w3.org/2000/svg\""), std::string::npos);
  EXPECT_NE(svg.find("viewBox=\"0 0 "), std::string::npos);
}

TEST(AttentionSvg, OneCellPerWeight) {
  for (auto [layers, heads, rows, cols] :
       std::vector<std::tuple<int, int, int64_t, int64_t>>{
           {1, 1, 1, 1}, {2, 4, 16, 16}, {3, 2, 4, 7}, {1, 3, 2, 2}}) {
    std::string svg = renderAttentionSvg(randomLayers(layers, heads, rows, cols), {}, {}, "");
    EXPECT_EQ(xmlProblem(svg), "");
    std::vector<Cell> cs = cells(svg);
    EXPECT_EQ(int64_t(cs.size()), layers * heads * rows * cols)
        << layers << "x" << heads << "x" << rows << "x" << cols;
    EXPECT_EQ(int64_t(count(svg, "class=\"cell\"")), layers * heads * rows * cols);
    for (int l = 1; l <= layers; ++l)
      for (int h = 1; h <= heads; ++h)
        EXPECT_EQ(int64_t(cells(panel(svg, l, h)).size()), rows * cols) << l << "," << h;
  }
}

TEST(AttentionSvg, TitlesEveryMapAsTheTutorial) {
  std::string svg = renderAttentionSvg(randomLayers(3, 4, 3, 3), {}, {}, "");
  for (int l = 1; l <= 3; ++l)
    for (int h = 1; h <= 4; ++h) {
      std::string t = "Layer " + std::to_string(l) + ", Head " + std::to_string(h) + "</text>";
      EXPECT_EQ(count(svg, t), 1u) << t;
      EXPECT_NE(panel(svg, l, h).find(t), std::string::npos) << t;
    }
  EXPECT_EQ(svg.find("Layer 0"), std::string::npos); // 1-based, as f"Layer {row+1}"
  EXPECT_EQ(svg.find("Head 0"), std::string::npos);
  EXPECT_EQ(svg.find("Head 5"), std::string::npos);
}

TEST(AttentionSvg, LayersByRowsHeadsByColumns) {
  std::string svg = renderAttentionSvg(randomLayers(2, 3, 4, 4), {}, {}, "");
  auto origin = [&](int l, int h) {
    std::vector<Cell> cs = cells(panel(svg, l, h));
    double x = 1e9, y = 1e9;
    for (const Cell &c : cs)
      x = std::min(x, c.x), y = std::min(y, c.y);
    return std::make_pair(x, y);
  };
  for (int l = 1; l <= 2; ++l)
    for (int h = 1; h <= 3; ++h) {
      if (h > 1) {
        EXPECT_GT(origin(l, h).first, origin(l, h - 1).first);
        EXPECT_EQ(origin(l, h).second, origin(l, h - 1).second);
      }
      if (l > 1) {
        EXPECT_GT(origin(l, h).second, origin(l - 1, h).second);
        EXPECT_EQ(origin(l, h).first, origin(l - 1, h).first);
      }
    }
}

TEST(AttentionSvg, FirstQueryAtTheBottom) {
  // origin='lower': query 0's row is drawn lowest (largest y), keys left to right.
  std::string svg = renderAttentionSvg(randomLayers(1, 1, 5, 3), {}, {}, "");
  std::vector<Cell> cs = cells(svg);
  ASSERT_EQ(cs.size(), 15u);
  double maxY = 0, minY = 1e9;
  for (const Cell &c : cs)
    maxY = std::max(maxY, c.y), minY = std::min(minY, c.y);
  for (const Cell &c : cs) {
    if (c.query == 0) {
      EXPECT_EQ(c.y, maxY);
    }
    if (c.query == 4) {
      EXPECT_EQ(c.y, minY);
    }
    for (const Cell &d : cs) {
      if (d.query == c.query + 1 && d.key == c.key) {
        EXPECT_DOUBLE_EQ(d.y, c.y - c.h); // touching, one cell up
        EXPECT_EQ(d.x, c.x);
      }
      if (d.key == c.key + 1 && d.query == c.query) {
        EXPECT_DOUBLE_EQ(d.x, c.x + c.w);
        EXPECT_EQ(d.y, c.y);
      }
    }
  }
  // Query labels follow their rows: "0" labels the lowest row, "4" the highest.
  std::smatch m;
  ASSERT_TRUE(std::regex_search(
      svg, m, std::regex("class=\"ylabel\" x=\"[0-9.]+\" y=\"([0-9.]+)\"[^>]*>0</text>")));
  EXPECT_DOUBLE_EQ(std::stod(m[1]), maxY + cs[0].h / 2);
  ASSERT_TRUE(std::regex_search(
      svg, m, std::regex("class=\"ylabel\" x=\"[0-9.]+\" y=\"([0-9.]+)\"[^>]*>4</text>")));
  EXPECT_DOUBLE_EQ(std::stod(m[1]), minY + cs[0].h / 2);
}

TEST(AttentionSvg, TokensLabelBothAxesEscaped) {
  std::vector<std::string> rowsL = {"<&>", "a\"b'c", "plain"};
  std::vector<std::string> colsL = {"x", "<&>", "]]>", "k&v"};
  Layers layers = randomLayers(1, 2, 3, 4);
  std::string svg = renderAttentionSvg(layers, rowsL, colsL, "Title <with> & \"quotes\"");
  EXPECT_EQ(xmlProblem(svg), "");
  EXPECT_EQ(svg.find("<&>"), std::string::npos);
  // Two maps, each labels "<&>" on both axes.
  EXPECT_EQ(count(svg, "class=\"ylabel\""), 2u * 3u);
  EXPECT_EQ(count(svg, "class=\"xlabel\""), 2u * 4u);
  EXPECT_EQ(count(svg, ">&lt;&amp;&gt;</text>"), 4u);
  EXPECT_NE(svg.find(">a&quot;b&#39;c</text>"), std::string::npos);
  EXPECT_NE(svg.find(">plain</text>"), std::string::npos);
  EXPECT_NE(svg.find(">]]&gt;</text>"), std::string::npos);
  EXPECT_NE(svg.find(">k&amp;v</text>"), std::string::npos);
  EXPECT_NE(svg.find("Title &lt;with&gt; &amp; &quot;quotes&quot;</text>"), std::string::npos);
  // Tooltips name the tokens too.
  EXPECT_NE(svg.find("<title>query 0 (&lt;&amp;&gt;), key 2 (]]&gt;): "), std::string::npos);
}

TEST(AttentionSvg, EmptyLabelsAreIndices) {
  std::string svg = renderAttentionSvg(randomLayers(1, 1, 3, 3), {}, {}, "");
  for (int k = 0; k < 3; ++k) {
    std::string t = ">" + std::to_string(k) + "</text>";
    EXPECT_EQ(count(svg, t), 2u) << t; // once per axis
  }
  EXPECT_NE(svg.find("<title>query 2, key 1: "), std::string::npos);
}

TEST(AttentionSvg, OddLabelsStayWellFormed) {
  // Control characters, invalid UTF-8, a long token, multi-byte UTF-8.
  std::vector<std::string> labels = {"\n", std::string("a\x01z"), "\xff\xfe",
                                     "\xc3\x28", "\xed\xa0\x80", "a-very-long-token-indeed",
                                     "\xc3\xa9t\xc3\xa9", "\xe4\xb8\xad"};
  std::string svg = renderAttentionSvg(randomLayers(1, 1, 8, 8), labels, labels, "\x01");
  EXPECT_EQ(xmlProblem(svg), "");
  EXPECT_NE(svg.find(">\\n</text>"), std::string::npos);
  EXPECT_NE(svg.find(">a\\x01z</text>"), std::string::npos);
  EXPECT_NE(svg.find(">\xEF\xBF\xBD\xEF\xBF\xBD</text>"), std::string::npos);
  EXPECT_NE(svg.find(">\xc3\xa9t\xc3\xa9</text>"), std::string::npos);
  EXPECT_NE(svg.find(">\xe4\xb8\xad</text>"), std::string::npos);
  // Long tokens are cut at the ticks ...
  EXPECT_NE(svg.find(">a-very-long\xE2\x80\xA6</text>"), std::string::npos);
  // ... but whole in the tooltips.
  EXPECT_NE(svg.find("(a-very-long-token-indeed)"), std::string::npos);
}

//===- colours ------------------------------------------------------------===//

TEST(AttentionSvg, ViridisEndsAndMiddle) {
  // matplotlib: viridis(0), viridis(0.5), viridis(1.0), and clamping.
  EXPECT_EQ(viridisHex(0), "#440154");
  EXPECT_EQ(viridisHex(1), "#fde725");
  EXPECT_EQ(viridisHex(0.5), "#21918c");
  EXPECT_EQ(viridisHex(0.25), "#3b528b");
  EXPECT_EQ(viridisHex(0.75), "#5ec962");
  EXPECT_EQ(viridisHex(-1), "#440154");
  EXPECT_EQ(viridisHex(7), "#fde725");
}

TEST(AttentionSvg, ScaleRunsFromZeroToEachMapsMax) {
  // Head 1 peaks at 0.7, head 2 at 0.4: each peak is viridis' top colour,
  // each zero its bottom colour (vmin=0, vmax = the map's max).
  AttentionGrid a{2, 2, {0.7f, 0.3f, 0.0f, 0.3f}};
  AttentionGrid b{2, 2, {0.4f, 0.0f, 0.2f, 0.1f}};
  std::string svg = renderAttentionSvg({{a, b}}, {"x", "y"}, {"x", "y"}, "");
  std::vector<Cell> ca = cells(panel(svg, 1, 1)), cb = cells(panel(svg, 1, 2));
  ASSERT_EQ(ca.size(), 4u);
  ASSERT_EQ(cb.size(), 4u);
  EXPECT_EQ(ca[0].fill, "#fde725"); // 0.7 = max
  EXPECT_EQ(ca[2].fill, "#440154"); // 0
  EXPECT_EQ(ca[1].fill, viridisHex(0.3 / 0.7));
  EXPECT_EQ(cb[0].fill, "#fde725"); // 0.4 = max
  EXPECT_EQ(cb[1].fill, "#440154");
  EXPECT_EQ(cb[2].fill, viridisHex(0.5)); // 0.2 / 0.4
  EXPECT_EQ(cb[2].fill, "#21918c");
  // Each map has its colour bar, with 0 among its ticks.
  EXPECT_EQ(count(svg, "class=\"colourbar\""), 2u);
  EXPECT_EQ(count(svg, "fill=\"url(#tfc-viridis)\""), 2u);
  EXPECT_NE(svg.find("<linearGradient id=\"tfc-viridis\""), std::string::npos);
}

TEST(AttentionSvg, OddWeights) {
  // NaN: left unpainted; negative: bottom colour; all zeros: bottom colour.
  float nan = std::nanf("");
  AttentionGrid g{1, 3, {nan, -0.5f, 0.25f}};
  AttentionGrid z{1, 3, {0, 0, 0}};
  std::string svg = renderAttentionSvg({{g, z}}, {}, {}, "");
  EXPECT_EQ(xmlProblem(svg), "");
  std::vector<Cell> cs = cells(svg);
  ASSERT_EQ(cs.size(), 6u);
  EXPECT_EQ(cs[0].fill, "none");
  EXPECT_EQ(cs[1].fill, "#440154");
  EXPECT_EQ(cs[2].fill, "#fde725");
  for (int k = 3; k < 6; ++k)
    EXPECT_EQ(cs[size_t(k)].fill, "#440154");
}

TEST(AttentionSvg, TooltipsCarryTheExactWeight) {
  Layers layers = randomLayers(2, 2, 4, 4, 7);
  std::string svg = renderAttentionSvg(layers, tokens(4), tokens(4), "");
  std::vector<Cell> cs = cells(svg);
  ASSERT_EQ(cs.size(), 64u);
  size_t k = 0;
  for (auto &layer : layers)
    for (auto &g : layer)
      for (float w : g.weights) {
        const std::string &t = cs[k++].tooltip;
        std::string value = t.substr(t.rfind(": ") + 2);
        EXPECT_EQ(std::strtof(value.c_str(), nullptr), w) << t;
      }
  EXPECT_NE(svg.find("<title>query 3 (t3), key 0 (t0): "), std::string::npos);
}

//===- sizes, determinism -------------------------------------------------===//

TEST(AttentionSvg, SaneSizes) {
  // 16 tokens: cells of 15 px, a 240 px map; 2 tokens: larger cells.
  std::string big = renderAttentionSvg(randomLayers(2, 4, 16, 16), tokens(16), tokens(16), "T");
  std::vector<Cell> cb = cells(big);
  ASSERT_FALSE(cb.empty());
  EXPECT_GE(cb[0].w * 16, 160);
  EXPECT_LE(cb[0].w * 16, 320);
  auto [bw, bh] = size(big);
  EXPECT_GT(bw, 4 * 16 * cb[0].w);
  EXPECT_LT(bw, 2400);
  EXPECT_GT(bh, 2 * 16 * cb[0].w);
  EXPECT_LT(bh, 1200);

  std::string small = renderAttentionSvg(randomLayers(1, 1, 2, 2), {}, {}, "");
  std::vector<Cell> cs = cells(small);
  ASSERT_EQ(cs.size(), 4u);
  EXPECT_GE(cs[0].w * 2, 100);
  EXPECT_LE(cs[0].w * 2, 240);
  auto [sw, sh] = size(small);
  EXPECT_GT(sw, 2 * cs[0].w);
  EXPECT_LT(sw, 500);
  EXPECT_LT(sh, 500);
  // Every cell is square and inside the picture.
  for (const Cell &c : cb) {
    EXPECT_EQ(c.w, c.h);
    EXPECT_GE(c.x, 0);
    EXPECT_LE(c.x + c.w, bw);
    EXPECT_LE(c.y + c.h, bh);
  }

  // A long sequence: cells shrink to a floor, and the tick labels thin out.
  std::string longer = renderAttentionSvg(randomLayers(1, 1, 100, 100), {}, {}, "");
  std::vector<Cell> cl = cells(longer);
  ASSERT_EQ(cl.size(), 10000u);
  EXPECT_GE(cl[0].w, 2);
  EXPECT_LT(count(longer, "class=\"ylabel\""), 100u);
  EXPECT_GT(count(longer, "class=\"ylabel\""), 5u);
}

TEST(AttentionSvg, Deterministic) {
  Layers layers = randomLayers(2, 2, 6, 6, 3);
  std::string a = renderAttentionSvg(layers, tokens(6), tokens(6), "x");
  std::string b = renderAttentionSvg(layers, tokens(6), tokens(6), "x");
  EXPECT_EQ(a, b);
}

//===- errors -------------------------------------------------------------===//

TEST(AttentionSvg, RejectsMalformedArguments) {
  auto ok = randomLayers(2, 2, 3, 3);
  EXPECT_EQ(errorOf([&] { renderAttentionSvg(ok, tokens(3), tokens(3), ""); }), "(no exception)");

  auto bad = ok;
  bad[1][0].weights.pop_back();
  std::string e = errorOf([&] { renderAttentionSvg(bad, {}, {}, ""); });
  EXPECT_NE(e.find("layers[1][0]"), std::string::npos) << e;
  EXPECT_NE(e.find("8 weights"), std::string::npos) << e;
  EXPECT_NE(e.find("3*3"), std::string::npos) << e;

  bad = ok;
  bad[0][1].weights.resize(12); // 12 % 3 == 0 but 12 / 3 != 3
  EXPECT_NE(errorOf([&] { renderAttentionSvg(bad, {}, {}, ""); }).find("layers[0][1]"),
            std::string::npos);

  e = errorOf([&] { renderAttentionSvg(ok, tokens(2), tokens(3), ""); });
  EXPECT_NE(e.find("rowLabels has 2 labels for 3 rows"), std::string::npos) << e;
  e = errorOf([&] { renderAttentionSvg(ok, tokens(3), tokens(4), ""); });
  EXPECT_NE(e.find("colLabels has 4 labels for 3 cols"), std::string::npos) << e;
  e = errorOf([&] { renderAttentionSvg(ok, {}, tokens(1), ""); });
  EXPECT_NE(e.find("colLabels"), std::string::npos) << e;

  e = errorOf([&] { renderAttentionSvg({}, {}, {}, ""); });
  EXPECT_NE(e.find("no layers"), std::string::npos) << e;
  e = errorOf([&] { renderAttentionSvg({{}}, {}, {}, ""); });
  EXPECT_NE(e.find("no heads"), std::string::npos) << e;

  bad = ok;
  bad[1].pop_back();
  e = errorOf([&] { renderAttentionSvg(bad, {}, {}, ""); });
  EXPECT_NE(e.find("layers[1] has 1 heads"), std::string::npos) << e;

  bad = ok;
  bad[1][1] = AttentionGrid{3, 2, std::vector<float>(6, 0.5f)};
  e = errorOf([&] { renderAttentionSvg(bad, {}, {}, ""); });
  EXPECT_NE(e.find("same shape"), std::string::npos) << e;

  bad = ok;
  bad[0][0] = AttentionGrid{0, 3, {}};
  e = errorOf([&] { renderAttentionSvg(bad, {}, {}, ""); });
  EXPECT_NE(e.find("must be positive"), std::string::npos) << e;
  bad[0][0] = AttentionGrid{-1, -3, std::vector<float>(3)};
  EXPECT_NE(errorOf([&] { renderAttentionSvg(bad, {}, {}, ""); }).find("must be positive"),
            std::string::npos);

  // Every message says who complained.
  EXPECT_EQ(e.rfind("renderAttentionSvg: ", 0), 0u) << e;
}

//===- the example figure -------------------------------------------------===//

TEST(AttentionSvg, TutorialExample) {
  // As the tutorial's reverse task: 2 layers, 4 heads, 16 tokens, the input
  // digits as tick labels.
  std::mt19937 rng(42);
  std::uniform_int_distribution<int> digit(0, 9);
  std::vector<std::string> input;
  for (int k = 0; k < 16; ++k)
    input.push_back(std::to_string(digit(rng)));
  Layers layers = randomLayers(2, 4, 16, 16, 42);
  // Layer 2 attends mostly to the flipped position, as the trained model does.
  for (auto &g : layers[1])
    for (int64_t r = 0; r < 16; ++r) {
      double sum = 0;
      for (int64_t c = 0; c < 16; ++c) {
        float &w = g.weights[size_t(r * 16 + c)];
        w = w * 0.3f + (c == 15 - r ? 1.0f : 0.0f);
        sum += w;
      }
      for (int64_t c = 0; c < 16; ++c)
        g.weights[size_t(r * 16 + c)] = float(g.weights[size_t(r * 16 + c)] / sum);
    }
  std::string svg = renderAttentionSvg(layers, input, input, "Attention maps (reverse task)");
  EXPECT_EQ(xmlProblem(svg), "");
  EXPECT_EQ(cells(svg).size(), 2u * 4u * 16u * 16u);
  if (const char *path = std::getenv("TFC_ATTENTION_SVG_EXAMPLE")) {
    std::ofstream(path) << svg;
  }
}

} // namespace
