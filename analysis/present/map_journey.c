/* map_journey.c: a block's journey across the map: its frames as inline SVG and a small script. */
#include "map-private.h"

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* Per dot: its arrival (median of its nodes, unreached counted as latest; NAN when more than half never). */
static double *dot_arrivals(const Layout *l, const AnMapNet *net, const double *arrive) {
  double *out = g_new(double, MAX(l->n_dots, 1));
  GArray **members = g_new0(GArray *, MAX(l->n_dots, 1));
  for (guint32 v = 0; v < net->n_nodes; v++) {
    guint32 d = l->dot_of[v];
    if (!members[d]) members[d] = g_array_new(FALSE, FALSE, sizeof(double));
    double a = isnan(arrive[v]) ? INFINITY : arrive[v];
    g_array_append_val(members[d], a);
  }
  for (guint32 d = 0; d < l->n_dots; d++) {
    GArray *m = members[d];
    if (!m || m->len == 0) {
      out[d] = NAN;
    } else {
      qsort(m->data, m->len, sizeof(double), cmp_double);
      double med = g_array_index(m, double, (m->len - 1) / 2);
      out[d] = isinf(med) ? NAN : med;
    }
    if (m) g_array_unref(m);
  }
  g_free(members);
  return out;
}

static void json_num(GString *s, double v) {
  if (isnan(v) || isinf(v)) {
    g_string_append(s, "-1");
    return;
  }
  char buf[G_ASCII_DTOSTR_BUF_SIZE];
  g_ascii_formatd(buf, sizeof buf, "%.3f", v);
  /* trim trailing zeros: 12.500 -> 12.5, 3.000 -> 3 */
  char *e = buf + strlen(buf) - 1;
  while (e > buf && *e == '0') *e-- = '\0';
  if (*e == '.') *e = '\0';
  g_string_append(s, buf);
}

static void json_journey_vantages(GString *s, const AnJourney *j) {
  g_string_append(s, "[");
  for (guint i = 0; i < j->n_vantages; i++) {
    g_string_append(s, i ? ",{\"name\":" : "{\"name\":");
    mp_put_json_str(s, j->vantages[i]);
    g_string_append(s, ",\"ms\":");
    json_num(s, j->vantage_ms[i]);
    g_string_append(s, "}");
  }
  g_string_append(s, "]");
}

static const char *const JOURNEY_JS =
    "<script>\n"
    "(function(){\"use strict\";\n"
    "var D=JSON.parse(document.getElementById(\"journey-data\").textContent);\n"
    "var ramp=[[68,1,84],[72,40,120],[62,73,137],[49,104,142],[38,130,142],[31,158,137],[53,183,121],"
    "[110,206,88],[181,222,43],[253,231,37]];\n"
    "function colour(f){f=Math.max(0,Math.min(1,f))*(ramp.length-1);var i=Math.min(Math.floor(f),ramp.length-2),"
    "u=f-i,a=ramp[i],b=ramp[i+1],c=[0,1,2].map(function(k){return Math.round(a[k]+(b[k]-a[k])*u);});"
    "return \"rgb(\"+c.join(\",\")+\")\";}\n"
    "var slider=document.getElementById(\"journey-slider\"),label=document.getElementById(\"journey-time\"),"
    "cursor=document.getElementById(\"journey-cursor\"),play=document.getElementById(\"journey-play\");\n"
    "var dots=null,map=document.getElementById(\"journey-map\");\n"
    "if(map&&D.arrive){var slot=map.querySelector(\".slot\");\n"
    " [\"map-dots\"].forEach(function(id){var g=document.getElementById(id).cloneNode(true);g.id=\"journey-dots\";"
    "slot.appendChild(g);dots=g.getElementsByTagName(\"circle\");});\n"
    " var src=document.getElementById(\"map-svg\");[\".mesh\",\".poolmesh\",\".markers\"].forEach(function(q){"
    "var e=src.querySelector(q);if(e){e=e.cloneNode(true);e.querySelectorAll(\".gw,.gwlabel\").forEach(function(x){"
    "x.remove();});slot.appendChild(e);}});}\n"
    "var frames=D.frames,X0=D.axis[0],X1=D.axis[1];\n"
    "function xOf(t){return X0+(X1-X0)*t/D.tEnd;}\n"
    "function show(k){var t=frames[k],n=0;\n"
    " if(dots)for(var i=0;i<dots.length;i++){var a=D.arrive[i],on=a>=0&&a<=t;if(on)n+=D.count[i];"
    "dots[i].setAttribute(\"fill\",on?colour(a/D.cMax):\"#d4d4d4\");}\n"
    " if(label)label.textContent=\"t = \"+t.toFixed(1)+(dots?\" ms after mining\":\" ms after the first vantage point's observation\")+(dots?\": \"+n.toLocaleString(\"en-US\")"
    "+\" of \"+D.nodes.toLocaleString(\"en-US\")+\" nodes have the block\":\"\");\n"
    " if(cursor){var x=xOf(t);cursor.setAttribute(\"x1\",x);cursor.setAttribute(\"x2\",x);}\n"
    " return n;}\n"
    "var timer=null;function stop(){if(timer){clearInterval(timer);timer=null;}if(play)play.textContent=\"Play\";}\n"
    "if(slider){slider.addEventListener(\"input\",function(){show(+slider.value);});show(+slider.value);}\n"
    "if(play)play.addEventListener(\"click\",function(){if(timer){stop();return;}"
    "if(+slider.value>=frames.length-1)slider.value=0;play.textContent=\"Pause\";"
    "timer=setInterval(function(){var k=+slider.value+1;if(k>=frames.length){stop();return;}slider.value=k;"
    "show(k);},50);});\n"
    "if(location.hash===\"#selftest\"&&slider){\n"
    " function fills(){var f=[];if(dots)for(var i=0;i<dots.length;i++)f.push(dots[i].getAttribute(\"fill\"));return f;}\n"
    " function move(k){slider.value=k;slider.dispatchEvent(new Event(\"input\"));return fills();}\n"
    " var first=move(0),last=move(frames.length-1),changed=0,reached=[],mono=true;\n"
    " for(var i=0;i<first.length;i++)if(first[i]!==last[i])changed++;\n"
    " for(var k=0;k<frames.length;k++){reached.push(show(k));if(k&&reached[k]<reached[k-1])mono=false;}\n"
    " var grey=0;for(var i=0;i<first.length;i++)if(first[i]===\"#d4d4d4\")grey++;\n"
    " var pre=document.createElement(\"pre\");pre.id=\"journey-selftest\";pre.textContent=JSON.stringify({"
    "dots:dots?dots.length:0,frames:frames.length,changed:changed,grey_at_start:grey,reached_first:reached[0],"
    "reached_last:reached[frames.length-1],monotone:mono,cursor_x:cursor?+cursor.getAttribute(\"x1\"):null,"
    "label:label?label.textContent:\"\"});document.body.appendChild(pre);\n"
    " var half=0;while(half<frames.length-1&&reached[half]*2<reached[frames.length-1])half++;move(half);\n"
    " var top=document.getElementById(\"network\")||document.getElementById(\"journey\");\n"
    " if(top)for(var e=top.previousElementSibling;e;e=e.previousElementSibling)e.style.display=\"none\";}\n"
    "})();\n"
    "</script>\n";

/* The time panel: share of nodes reached against time (simulated), the vantage points' first observations. */
static void time_panel(GString *h, const AnJourney *sim, const double *reached_share, double t_end,
                       const AnJourney *measured) {
  const double X0 = 110, X1 = 980;
  guint rows = (sim ? sim->n_vantages : 0) + (measured ? measured->n_vantages : 0);
  double curve_h = sim && reached_share ? 120 : 0;
  double top = 20, vp_top = top + curve_h + (curve_h > 0 ? 30 : 0);
  double height = vp_top + 16.0 * rows + 40;
  g_string_append_printf(h,
                         "<svg id=\"journey-axis\" class=\"axis\" xmlns=\"http://www.w3.org/2000/svg\" "
                         "viewBox=\"0 0 1000 %.0f\" role=\"img\"><title>Nodes reached and the vantage points' "
                         "first observations against time</title>\n",
                         height);
  /* time axis ticks: 5 to 10 round steps */
  double raw = t_end / 8, p10 = pow(10, floor(log10(raw))), m = raw / p10;
  double step = (m <= 1 ? 1 : m <= 2 ? 2 : m <= 5 ? 5 : 10) * p10;
  double axis_y = height - 22;
  g_string_append(h, "<g stroke=\"#999\" stroke-width=\"0.6\">");
  mp_svg_line(h, X0, axis_y, X1, axis_y, NULL);
  g_string_append(h, "</g>");
  for (double t = 0; t <= t_end + 1e-9; t += step) {
    double x = X0 + (X1 - X0) * t / t_end;
    g_string_append(h, "<g stroke=\"#ddd\" stroke-width=\"0.5\">");
    mp_svg_line(h, x, top, x, axis_y, NULL);
    g_string_append(h, "</g>");
    char buf[G_ASCII_DTOSTR_BUF_SIZE];
    g_ascii_formatd(buf, sizeof buf, "%.0f", t);
    mp_svg_text(h, x, axis_y + 12, "tick", "middle", buf);
  }
  mp_svg_text(h, X1, height - 1, "tick", "end",
           sim ? "ms after mining (vantage rows: after the first vantage point's observation, placed from its time)"
               : "ms after the first vantage point's observation");
  if (curve_h > 0) {
    mp_svg_text(h, X0 - 6, top + 8, "tick", "end", "100% of nodes");
    mp_svg_text(h, X0 - 6, top + curve_h, "tick", "end", "0%");
    g_string_append(h, "<polyline id=\"journey-curve\" fill=\"none\" stroke=\"#31688e\" stroke-width=\"1.5\" points=\"");
    for (guint k = 0; k < AN_MAP_FRAMES; k++) {
      double t = t_end * k / (AN_MAP_FRAMES - 1);
      if (k) g_string_append_c(h, ' ');
      mp_put_f(h, X0 + (X1 - X0) * t / t_end);
      g_string_append_c(h, ',');
      mp_put_f(h, top + curve_h * (1 - reached_share[k]));
    }
    g_string_append(h, "\"/>\n");
  }
  double y = vp_top;
  for (int side = 0; side < 2; side++) {
    const AnJourney *j = side == 0 ? sim : measured;
    if (!j) continue;
    for (guint i = 0; i < j->n_vantages; i++, y += 16) {
      g_autofree char *name = g_strdup_printf("%s %s", side == 0 && measured ? "sim" : side == 1 ? "measured" : "",
                                              j->vantages[i]);
      mp_svg_text(h, X0 - 6, y + 4, "vpt", "end", g_strstrip(name));
      double ms = j->vantage_ms[i];
      if (isnan(ms)) {
        mp_svg_text(h, X0 + 4, y + 4, "tick", NULL, "not seen");
        continue;
      }
      /* simulated rows sit at their time after mining; measured ones at their delay after the first */
      double at = (sim && !isnan(sim->first_obs_ms) ? sim->first_obs_ms : 0) + ms;
      double x = X0 + (X1 - X0) * MIN(at, t_end) / t_end;
      g_string_append_printf(h, "<g stroke=\"%s\" stroke-width=\"2\">", side == 0 ? "#c00" : "#333");
      mp_svg_line(h, x, y - 5, x, y + 5, NULL);
      g_string_append(h, "</g>");
      char buf[G_ASCII_DTOSTR_BUF_SIZE];
      g_ascii_formatd(buf, sizeof buf, "%.1f", ms);
      g_autofree char *lab = g_strdup_printf("+%s ms", buf);
      mp_svg_text(h, x + 5, y + 4, "tick", NULL, lab);
    }
  }
  g_string_append_printf(h, "<line id=\"journey-cursor\" x1=\"%.0f\" y1=\"%.0f\" x2=\"%.0f\" y2=\"%.0f\" "
                            "stroke=\"#e07000\" stroke-width=\"1.2\"/>\n",
                         X1, top, X1, axis_y);
  g_string_append(h, "</svg>\n");
}

void an_map_journey(GString *h, const AnMapNet *net, const AnJourney *sim, const AnJourney *measured) {
  g_return_if_fail(h && (sim || measured));
  gboolean has_map = sim && sim->arrive_ms && net && net->n_nodes > 0;
  g_autoptr(Layout) l = has_map ? mp_layout_new(net, NULL) : NULL;
  g_autofree double *dot_t = has_map ? dot_arrivals(l, net, sim->arrive_ms) : NULL;
  /* t_end: the last arrival (simulated), or the last vantage observation; 2% headroom; at least 1 ms */
  double t_end = 0;
  if (has_map)
    for (guint32 v = 0; v < net->n_nodes; v++)
      if (!isnan(sim->arrive_ms[v])) t_end = MAX(t_end, sim->arrive_ms[v]);
  for (int side = 0; side < 2; side++) {
    const AnJourney *j = side ? measured : sim;
    if (!j) continue;
    for (guint i = 0; i < j->n_vantages; i++)
      if (!isnan(j->vantage_ms[i]))
        t_end = MAX(t_end, j->vantage_ms[i] + (sim && !isnan(sim->first_obs_ms) ? sim->first_obs_ms : 0));
  }
  t_end = MAX(t_end * 1.02, 1.0);
  double reached_share[AN_MAP_FRAMES] = {0};
  double c_max = t_end; /* the colour scale: 0 .. the 95th percentile of the arrivals (later ones: its end) */
  if (has_map) {
    g_autofree double *sorted = g_new(double, net->n_nodes);
    guint32 n = 0;
    for (guint32 v = 0; v < net->n_nodes; v++)
      if (!isnan(sim->arrive_ms[v])) sorted[n++] = sim->arrive_ms[v];
    qsort(sorted, n, sizeof *sorted, cmp_double);
    if (n > 0) c_max = MAX(sorted[(n - 1) * 95 / 100], 1.0);
    guint32 j = 0;
    for (guint k = 0; k < AN_MAP_FRAMES; k++) {
      double t = t_end * k / (AN_MAP_FRAMES - 1);
      while (j < n && sorted[j] <= t) j++;
      reached_share[k] = (double)j / net->n_nodes;
    }
  }
  g_string_append(h, "<figure id=\"fig-journey\" class=\"journey map\">\n<figcaption>");
  mp_put_esc(h, sim ? sim->caption : measured->caption);
  if (sim && measured) {
    g_string_append(h, ", beside ");
    mp_put_esc(h, measured->caption);
  }
  g_string_append(h, "</figcaption>\n");
  if (has_map) {
    mp_map_toggles(h, "journey", net->n_links, mp_count_pool_links(net), FALSE);
    g_string_append_printf(h,
                           "<svg id=\"journey-map\" xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 %.0f %.0f\" "
                           "role=\"img\"><title>Arrival of the block at each node</title>\n"
                           "<use href=\"#map-land\"/><g class=\"slot\"></g>\n",
                           MAP_W, MAP_H);
    /* colour legend */
    g_string_append(h, "<defs><linearGradient id=\"journey-ramp\">");
    static const char *const stops[] = {"#440154", "#482878", "#3e4989", "#31688e", "#26828e",
                                        "#1f9e89", "#35b779", "#6ece58", "#b5de2b", "#fde725"};
    for (guint i = 0; i < G_N_ELEMENTS(stops); i++)
      g_string_append_printf(h, "<stop offset=\"%u%%\" stop-color=\"%s\"/>", i * 100 / 9, stops[i]);
    g_string_append(h, "</linearGradient></defs><rect x=\"20\" y=\"350\" width=\"200\" height=\"8\" "
                       "fill=\"url(#journey-ramp)\"/>");
    mp_svg_text(h, 20, 346, "gwlabel", NULL, "0 ms");
    char buf[G_ASCII_DTOSTR_BUF_SIZE];
    g_ascii_formatd(buf, sizeof buf, "%.0f", c_max);
    g_autofree char *lab = g_strdup_printf("%s ms (95%% of nodes): arrival after mining; grey: not yet", buf);
    mp_svg_text(h, 20, 368, "gwlabel", NULL, lab);
    g_string_append(h, "</svg>\n");
  }
  g_string_append_printf(h,
                         "<div class=\"controls\"><button type=\"button\" id=\"journey-play\">Play</button>"
                         "<input type=\"range\" id=\"journey-slider\" min=\"0\" max=\"%d\" step=\"1\" value=\"%d\" "
                         "aria-label=\"time\"><span id=\"journey-time\"></span></div>\n",
                         AN_MAP_FRAMES - 1, AN_MAP_FRAMES - 1);
  time_panel(h, sim, has_map ? reached_share : NULL, t_end, measured);
  /* the data */
  g_string_append(h, "<script type=\"application/json\" id=\"journey-data\">{\"tEnd\":");
  json_num(h, t_end);
  g_string_append(h, ",\"cMax\":");
  json_num(h, c_max);
  g_string_append(h, ",\"axis\":[110,980],\"frames\":[");
  for (guint k = 0; k < AN_MAP_FRAMES; k++) {
    if (k) g_string_append_c(h, ',');
    json_num(h, t_end * k / (AN_MAP_FRAMES - 1));
  }
  g_string_append(h, "]");
  if (has_map) {
    g_string_append_printf(h, ",\"nodes\":%u,\"arrive\":[", net->n_nodes);
    for (guint32 d = 0; d < l->n_dots; d++) {
      if (d) g_string_append_c(h, ',');
      json_num(h, dot_t[d]);
    }
    g_string_append(h, "],\"count\":[");
    for (guint32 d = 0; d < l->n_dots; d++) g_string_append_printf(h, d ? ",%u" : "%u", l->dot_count[d]);
    g_string_append(h, "]");
  }
  if (sim) {
    g_string_append(h, ",\"sim\":");
    json_journey_vantages(h, sim);
  }
  if (measured) {
    g_string_append(h, ",\"measured\":");
    json_journey_vantages(h, measured);
  }
  g_string_append(h, "}</script>\n");
  g_string_append(h, "<p class=\"note\">");
  if (has_map)
    g_string_append(h, "The slider scrubs time since the block was mined; Play runs it. Each node is coloured "
                       "by when it first had the full block (grey: not yet). The curve is the share of nodes "
                       "that have it; red ticks: the vantage points' first observations (block message or "
                       "announcement), labelled with their delay after the first vantage point. ");
  if (measured)
    g_string_append(h, "Measured rows: what the vantage points of the replayed logs saw (their delay after the "
                       "first of them; the logs have no node positions). ");
  g_string_append(h, "</p>\n</figure>\n");
  g_string_append(h, JOURNEY_JS);
}
