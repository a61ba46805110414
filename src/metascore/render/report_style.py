"""The style sheet of ``detailed_results.html`` (:mod:`metascore.render.report`), inline in the page."""

from __future__ import annotations

__all__ = ["REPORT_CSS"]

REPORT_CSS = """
:root { --ink:#1f2933; --muted:#66788a; --line:#d9e2ec; --bg:#f5f7fa; --card:#fff;
  --accent:#2f6fde; --good:#1f7a4d; --good-bg:#e3f6ec; --bad:#a61b1b; --bad-bg:#fdecec;
  --warn-bg:#fff4d6; --warn:#8a5a00; --base:#5b4bb7; --base-bg:#ece9fb; --gold:#c58b00; }
* { box-sizing: border-box; }
body { margin:0; background:var(--bg); color:var(--ink);
  font: 14px/1.45 -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif; }
main { max-width: 1320px; margin: 0 auto; padding: 24px 20px 48px; }
header h1 { font-size: 24px; margin: 0 0 4px; }
header p { margin: 0; color: var(--muted); }
header p.where { font-size: 13px; text-transform: uppercase; letter-spacing: .04em; margin-bottom: 2px; }
header p.rule { color: var(--ink); font-size: 15px; margin-bottom: 2px; }
section { background: var(--card); border: 1px solid var(--line); border-radius: 10px;
  padding: 18px 20px; margin-top: 18px; }
h2 { font-size: 17px; margin: 0 0 10px; }
h3 { font-size: 14px; margin: 16px 0 6px; color: var(--muted); text-transform: uppercase;
  letter-spacing: .04em; }
.cards { display:flex; flex-wrap:wrap; gap:10px; margin-top:12px; }
.card { background:var(--card); border:1px solid var(--line); border-radius:10px;
  padding:8px 14px; flex:1 1 120px; }
.card.wide { flex:2 1 220px; }
.card .label { color:var(--muted); font-size:11.5px; text-transform:uppercase; letter-spacing:.04em; }
.card .value { font-size:18px; font-weight:600; margin-top:1px; overflow-wrap:break-word; }
.card .value.long { font-size:15px; }
.msg { background:var(--warn-bg); color:var(--warn); border:1px solid #f0d58c;
  border-radius:8px; padding:10px 14px; margin-top:12px; }
.scroll { overflow-x:auto; }
table { border-collapse: collapse; width: 100%; font-variant-numeric: tabular-nums; }
th, td { padding: 6px 10px; border-bottom: 1px solid var(--line); text-align: left;
  vertical-align: top; }
th { background: #eef2f7; font-weight: 600; font-size: 12.5px; white-space: nowrap; }
td.num, th.num { text-align: right; white-space: nowrap; }
th.judge { white-space: normal; min-width: 7em; max-width: 11em; vertical-align: bottom; }
th.task { white-space: normal; text-align: center; color: var(--muted); font-weight: 600;
  border-bottom: 2px solid var(--line); }
table.leaderboard th { white-space: normal; }
thead tr:first-child th[rowspan] { vertical-align: bottom; }
td.status { min-width: 15em; max-width: 26em; }
td.name { min-width: 11em; max-width: 18em; overflow-wrap: break-word; }
td .sub { color: var(--muted); font-size: 11.5px; margin-left: 3px; }
tr.winner td { background: #fff8e1; }
tr.baseline td { background: var(--base-bg); }
tr.excluded td { color: var(--muted); }
td.failed { color: var(--bad); }
details > summary { cursor: pointer; color: var(--accent); margin: 10px 0 4px; }
.badge { display:inline-block; font-size:11px; font-weight:600; border-radius:999px;
  padding:1px 8px; margin-left:6px; vertical-align:1px; }
.b-base { background:var(--base-bg); color:var(--base); border:1px solid #cfc8f3; }
.b-ok { background:var(--good-bg); color:var(--good); }
.b-no { background:var(--bad-bg); color:var(--bad); }
.b-win { background:#fff1c2; color:var(--gold); }
.reason { color: var(--muted); font-size: 12.5px; }
.note { color: var(--muted); font-size: 12.5px; margin: 8px 0 0; }
pre { background:#0f1720; color:#e6edf3; padding:12px 14px; border-radius:8px;
  overflow-x:auto; font-size:12.5px; }
dl.sig { display:grid; grid-template-columns: max-content 1fr; gap:4px 16px; margin:0; }
dl.sig dt { color:var(--muted); } dl.sig dd { margin:0; font-family: ui-monospace, monospace; }
svg text { font-family: -apple-system, "Segoe UI", Roboto, Arial, sans-serif; }
.legend { color: var(--muted); font-size: 12px; margin-top: 6px; }
table.stats { width: auto; } table.stats td.num { font-size: 16px; font-weight: 600; }
footer { color: var(--muted); font-size: 12px; margin-top: 18px; text-align: center; }
.reweight .rw-body { display: none; }
.reweight.rw-live .rw-body { display: flex; flex-wrap: wrap; gap: 16px; align-items: flex-start; }
.reweight.rw-live .rw-needs-script { display: none; }
.rw-needs-script { color: var(--warn); }
.rw-form { flex: 0 1 330px; max-height: 440px; overflow-y: auto; }
.rw-form fieldset { border: 1px solid var(--line); border-radius: 8px; margin: 0 0 10px; padding: 6px 10px; }
.rw-form legend { color: var(--muted); font-size: 12px; text-transform: uppercase; letter-spacing: .04em; }
.rw-weight { display: flex; justify-content: space-between; align-items: center; gap: 8px; padding: 3px 0; }
.rw-weight label { overflow-wrap: anywhere; } .rw-weight .sub { display: block; margin: 0; }
.rw-weight input { width: 5.5em; font: inherit; padding: 2px 4px; }
.rw-weight input[aria-invalid=true] { border-color: var(--bad); background: var(--bad-bg); }
.rw-actions { display: flex; flex-wrap: wrap; gap: 8px; align-items: center; }
.rw-actions button { font: inherit; padding: 3px 10px; }
.rw-link { display: flex; gap: 6px; align-items: center; width: 100%; color: var(--muted); font-size: 12px; }
.rw-url { flex: 1; min-width: 0; font: 12px ui-monospace, monospace; padding: 2px 4px; }
.rw-result { flex: 1 1 480px; min-width: 0; }
.rw-result .scroll { max-height: 420px; overflow-y: auto; }
.rw-status { margin: 0 0 8px; }
#reweighted caption { text-align: left; color: var(--muted); font-size: 12px; padding-bottom: 4px; }
td.rw-up { color: var(--good); } td.rw-down { color: var(--bad); }
:focus-visible { outline: 2px solid var(--accent); outline-offset: 1px; }
"""
