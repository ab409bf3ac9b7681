"""The status page's stylesheet, inline in the page (one file, no network): readable on a phone (one
column, nothing wider than the screen) and on a desktop (cards in a row, charts side by side)."""

CSS = """
:root { --ok:#2e7d32; --warn:#ed8c00; --fail:#c62828; --unknown:#9e9e9e; --muted:#5c6bc0;
        --maintenance:#6d4c41; --ink:#1d1d1f; --soft:#6b6b70; --line:#e3e3e8; --card:#fafafa; }
* { box-sizing: border-box; }
body { font: 15px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: var(--ink);
       margin: 0 auto; padding: 12px; max-width: 1200px; }
h1 { font-size: 1.35em; margin: 0 0 2px; } h2 { font-size: 1.1em; margin: 22px 0 8px; }
a { color: #1558b0; } .soft { color: var(--soft); font-size: .9em; }
header { border-bottom: 1px solid var(--line); padding-bottom: 8px; }
.verdict { display: inline-block; padding: 1px 8px; border-radius: 10px; color: #fff; font-size: .85em; }
.verdict.healthy { background: var(--ok); } .verdict.bad { background: var(--fail); }
.cards { display: grid; grid-template-columns: repeat(auto-fit, minmax(110px, 1fr)); gap: 8px; }
.card { background: var(--card); border: 1px solid var(--line); border-radius: 8px; padding: 8px 10px; }
.card b { display: block; font-size: 1.6em; } .card.fail b, .card.error b { color: var(--fail); }
.card.warn b { color: var(--warn); } .card.ok b { color: var(--ok); } .card.muted b { color: var(--muted); }
.card.maintenance b { color: var(--maintenance); }
.problem { border-left: 4px solid var(--warn); padding: 4px 10px; margin: 6px 0; background: var(--card); }
.problem.fail, .problem.error { border-left-color: var(--fail); }
.problem ul { margin: 4px 0 0; padding-left: 18px; } .problem li { margin: 2px 0; }
.tag { font-size: .8em; color: var(--soft); }
table { border-collapse: collapse; width: 100%; font-size: .92em; }
th, td { text-align: left; padding: 4px 6px; border-bottom: 1px solid var(--line); vertical-align: top; }
.scroll { overflow-x: auto; }
.charts { display: grid; grid-template-columns: repeat(auto-fit, minmax(min(100%, 460px), 1fr)); gap: 12px; }
figure { margin: 0; } figcaption { font-weight: 600; margin-bottom: 4px; }
svg.chart { width: 100%; height: auto; display: block; }
svg .plot { fill: #fff; stroke: var(--line); } svg .grid { stroke: #f0f0f3; }
svg .guide { stroke: var(--fail); stroke-dasharray: 6 4; }
svg .guide2 { stroke: var(--soft); stroke-dasharray: 3 3; }
svg .band { --c: var(--soft); stroke-dasharray: 4 3; }
svg .axis, svg .glabel, svg .legend { font-size: 13px; fill: var(--soft); }
/* A series' class sets its colour only: the line is stroked, never filled; its legend is filled. */
svg .s0 { --c: #1565c0; } svg .s1 { --c: #6a1b9a; } svg .s2 { --c: #00838f; } svg .s3 { --c: #5d4037; }
svg .lfail { --c: var(--fail); } svg .lwarn { --c: var(--warn); }
svg polyline { fill: none; stroke: var(--c); stroke-width: 1.6; } svg circle { fill: var(--c); }
svg text.legend { fill: var(--c, var(--soft)); }
svg.strip { width: 100%; height: 12px; display: block; }
svg.strip .ok { fill: var(--ok); } svg.strip .warn { fill: var(--warn); }
svg.strip .fail { fill: var(--fail); } svg.strip .unknown { fill: #d6d6da; }
.strips td.name { width: 28%; max-width: 240px; overflow: hidden; text-overflow: ellipsis;
                  white-space: nowrap; }
.outcome-ok, .outcome-nothing_to_do { color: var(--ok); }
.outcome-degraded, .outcome-running { color: var(--fail); }
@media (max-width: 600px) { body { padding: 8px; font-size: 14px; } .strips td.name { width: 38%; } }
"""
