// The mini-MapReduce web UI: plain JavaScript over the master's REST API,
// no framework and no build step. Views are redrawn from JSON on every
// poll; the URL fragment names the view (#/ or #/job/ID) and may carry the
// token once (#/?token=T), which is then moved to sessionStorage.
'use strict';

const TOKEN_KEY = 'mr-token';
// Poll period: the master samples resources once a second.
const POLL_MS = 1000;
const LEVELS = ['cache_local', 'node_local', 'cache_rack_local', 'rack_local', 'off_rack'];
const $ = (id) => document.getElementById(id);

let timer = null;
let schedulerShown = '';

// ------------------------------------------------------------ helpers

function esc(s) {
  return String(s ?? '').replace(/[&<>"']/g, (c) =>
    ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]);
}

function bytes(n) {
  n = Number(n) || 0;
  const u = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let i = 0;
  while (n >= 1024 && i < u.length - 1) { n /= 1024; i++; }
  return (i === 0 ? n.toFixed(0) : n.toFixed(n < 10 ? 1 : 0)) + ' ' + u[i];
}

function secs(s) {
  s = Number(s) || 0;
  if (s < 60) return s.toFixed(s < 10 ? 2 : 1) + ' s';
  const m = Math.floor(s / 60);
  return m + ' m ' + Math.round(s - 60 * m) + ' s';
}

function pct(a, b) { return b > 0 ? Math.min(100, 100 * a / b) : 0; }

/// A sparkline of one or two series (arrays of numbers) scaled to `max`
/// (or to the largest value seen).
function spark(series, max) {
  const all = series.flat();
  const top = max || Math.max(1, ...all);
  const n = Math.max(2, ...series.map((s) => s.length));
  const lines = series.map((s, k) => {
    const pts = s.map((v, i) => {
      const x = (100 * (i + n - s.length)) / (n - 1);
      const y = 22 - (21 * Math.min(v, top)) / top;
      return x.toFixed(1) + ',' + y.toFixed(1);
    }).join(' ');
    return `<polyline class="${k ? 'b' : 'a'}" points="${pts}"/>`;
  }).join('');
  return `<svg class="spark" viewBox="0 0 100 23" preserveAspectRatio="none">${lines}</svg>`;
}

function bar(parts, cls) {
  return `<div class="bar ${cls || ''}">` +
    parts.map(([w, c]) => `<span class="${c}" style="width:${w.toFixed(1)}%"></span>`).join('') +
    '</div>';
}

function localityBar(loc) {
  const total = LEVELS.reduce((a, l) => a + (loc[l] || 0), 0);
  if (!total) return '<div class="loc"></div>';
  return '<div class="loc">' + LEVELS.map((l) =>
    loc[l] ? `<span class="l-${l}" style="width:${pct(loc[l], total)}%" title="${l}: ${loc[l]}"></span>` : ''
  ).join('') + '</div>';
}

function legend(counts) {
  return '<div class="legend">' + LEVELS.map((l) =>
    `<span><i class="l-${l}"></i>${l}${counts ? ': <b>' + (counts[l] || 0) + '</b>' : ''}</span>`
  ).join('') + '</div>';
}

// ------------------------------------------------------------ token and API

function token() { return sessionStorage.getItem(TOKEN_KEY); }

class Unauthorized extends Error {}
/// A 403: this token's role or ownership does not reach what was asked.
class Forbidden extends Error {}

async function api(path, opts = {}) {
  const headers = Object.assign({ Authorization: 'Bearer ' + token() }, opts.headers || {});
  const r = await fetch(path, Object.assign({}, opts, { headers }));
  const body = await r.json().catch(() => ({}));
  if (r.status === 401) throw new Unauthorized(body.error || 'unauthorized');
  if (r.status === 403) throw new Forbidden(body.error || 'forbidden');
  if (!r.ok) throw new Error(body.error || r.status + ' ' + r.statusText);
  return body;
}

function showLogin(msg) {
  sessionStorage.removeItem(TOKEN_KEY);
  for (const id of ['overview', 'jobpage', 'sched-form', 'logout']) $(id).hidden = true;
  $('login').hidden = false;
  $('login-error').textContent = msg || '';
  $('token').focus();
}

/// `#/job/3?token=T` → route `/job/3`; a token found there is stored and
/// removed from the address bar (and so from the browser history).
function route() {
  const h = location.hash.replace(/^#/, '');
  const [path, query] = h.split('?');
  if (query) {
    const t = new URLSearchParams(query).get('token');
    if (t) {
      sessionStorage.setItem(TOKEN_KEY, t);
      history.replaceState(null, '', '#' + (path || '/'));
    }
  }
  return path || '/';
}

// ------------------------------------------------------------ overview

function workerCard(w) {
  const r = w.resources || {};
  const h = w.history || {};
  const mem = pct(r.mem_used_bytes, r.mem_total_bytes);
  const memHist = (h.mem_used_bytes || []).map((v, i) => pct(v, (h.mem_total_bytes || [])[i]));
  const usedMaps = w.map_slots - w.free_map_slots;
  const usedReduces = w.reduce_slots - w.free_reduce_slots;
  // On its way out (mr admin decommission, or a SIGTERM's drain): how many
  // of its blocks the master still has to copy before it may go.
  const leaving = w.admin_state && w.admin_state !== 'normal';
  const admin = !leaving ? '' : `<span class="badge ${w.admin_state}" title="blocks still under-replicated elsewhere">` +
    `${w.admin_state}${w.admin_state === 'decommissioned' ? '' : ` · ${w.blocks_under_replicated} left`}</span>`;
  return `<div class="worker ${w.state}" data-name="${esc(w.name)}" data-admin="${esc(w.admin_state || 'normal')}">
    <div class="whead"><b>${esc(w.name)}</b><span class="muted">${esc(w.addr)}</span>
      <span class="badge ${w.state}">${w.state}</span>${admin}</div>
    <div class="metric"><span>cpu</span>${spark([h.cpu_pct || []], 100)}<span class="v">${(r.cpu_pct || 0).toFixed(0)}% · ld ${(r.load1 || 0).toFixed(2)}</span></div>
    <div class="metric"><span>mem</span>${spark([memHist], 100)}<span class="v">${bytes(r.mem_used_bytes)} (${mem.toFixed(0)}%)</span></div>
    <div class="metric" title="read / write per second"><span>disk</span>${spark([h.disk_read_bps || [], h.disk_write_bps || []])}<span class="v">${bytes(r.disk_read_bps)}/${bytes(r.disk_write_bps)}</span></div>
    <div class="metric" title="receive / transmit per second"><span>net</span>${spark([h.net_rx_bps || [], h.net_tx_bps || []])}<span class="v">${bytes(r.net_rx_bps)}/${bytes(r.net_tx_bps)}</span></div>
    <div class="metric" title="block cache fill (pinned blocks darker: never evicted)"><span>cache</span>${bar([[pct(w.cache_pinned_bytes || 0, w.cache_capacity_bytes), 'pinned'], [pct(Math.max(0, w.cache_used_bytes - (w.cache_pinned_bytes || 0)), w.cache_capacity_bytes), 'fill']])}<span class="v">${bytes(w.cache_used_bytes)}/${bytes(w.cache_capacity_bytes)}${w.cache_pinned_bytes ? ` · <span class="pin">${bytes(w.cache_pinned_bytes)} pinned</span>` : ''}</span></div>
    <div class="wfoot"><span class="blocks">${w.blocks} blocks stored</span>
      <span>maps ${w.state === 'alive' ? usedMaps : 0}/${w.map_slots} · reduces ${w.state === 'alive' ? usedReduces : 0}/${w.reduce_slots}</span></div>
  </div>`;
}

function renderWorkers(c) {
  const alive = c.workers.filter((w) => w.state === 'alive').length;
  $('summary').textContent = `${alive}/${c.workers.length} workers alive · ${c.files} files · ` +
    `${c.blocks} blocks · ${c.under_replicated_blocks} under-replicated`;
  const racks = new Map();
  for (const w of c.workers) {
    if (!racks.has(w.rack)) racks.set(w.rack, []);
    racks.get(w.rack).push(w);
  }
  $('racks').innerHTML = [...racks.keys()].sort().map((rack) =>
    `<div class="rack" data-rack="${esc(rack)}"><h3>rack ${esc(rack)}</h3>
      <div class="workers">${racks.get(rack).map(workerCard).join('')}</div></div>`
  ).join('');
}

function progress(j) {
  const p = j.progress || {};
  const m = j.maps || 0, r = j.reduces || 0;
  let html = bar([[pct(p.maps_done, m), 'done'], [pct(p.maps_running, m), 'run']], 'maps') +
    `<small>maps ${p.maps_done}/${m}` + (p.maps_running ? ` (${p.maps_running} running)` : '') + '</small>';
  if (r) {
    html += bar([[pct(p.reduces_done, r), 'done'], [pct(p.reduces_running, r), 'run']], 'reduces') +
      `<small>reduces ${p.reduces_done}/${r}` + (p.reduces_running ? ` (${p.reduces_running} running)` : '') + '</small>';
  }
  return html;
}

const isFinal = (s) => s === 'succeeded' || s === 'failed' || s === 'killed';

/// Whether the master sent this job in full: it does to the job's owner
/// and to admins; anyone else gets its summary, without counters (or
/// paths, or errors), and may neither open nor kill it.
const isFull = (j) => 'counters' in j;

function renderJobs(jobs) {
  jobs = jobs.slice().sort((a, b) => b.job_id - a.job_id);
  $('no-jobs').hidden = jobs.length > 0;
  $('jobs').querySelector('tbody').innerHTML = jobs.map((j) => {
    const full = isFull(j);
    const link = (text) => full ? `<a href="#/job/${j.job_id}">${text}</a>` : text;
    return `
    <tr id="job-row-${j.job_id}" data-state="${j.state}" data-view="${full ? 'full' : 'summary'}">
      <td>${link(j.job_id)}</td>
      <td>${link(esc(j.job))}<br><small class="muted">${full ? esc(j.output) : 'summary only: not your job'}</small></td>
      <td><span class="badge ${j.state}">${j.state}</span></td>
      <td class="progress">${progress(j)}</td>
      <td>${secs(j.exec_time_s)}</td>
      <td>${esc(j.scheduler)}${j.owner ? `<br><small class="muted owner">by ${esc(j.owner)}</small>` : ''}</td>
      <td>${full ? localityBar(j.locality || {}) : ''}</td>
      <td>${isFinal(j.state) || !full ? '' : `<button class="kill" data-job="${j.job_id}">kill</button>`}</td>
    </tr>`;
  }).join('');
}

async function overview() {
  const [c, jobs] = await Promise.all([api('/api/workers'), api('/api/jobs')]);
  renderWorkers(c);
  renderJobs(jobs);
  document.body.dataset.loaded = 'overview';
}

// ------------------------------------------------------------ job page

/// One row per worker (by rack, then name), tasks placed in lanes so that
/// attempts overlapping in time on one worker (its slots) do not hide
/// each other; coloured by locality level, reduces in their own colour.
function timeline(job, workers) {
  const now = Date.now();
  const t0 = job.submit_ms;
  const t1 = Math.max(job.end_ms || now, ...job.tasks.map((t) => t.end_ms || now), t0 + 100);
  const nodes = workers.slice().sort((a, b) => a.rack.localeCompare(b.rack) ||
    a.name.localeCompare(b.name, undefined, { numeric: true })).map((w) => w.name);
  for (const t of job.tasks) if (!nodes.includes(t.node)) nodes.push(t.node);
  const rows = new Map(nodes.map((n) => [n, []]));
  const tasks = job.tasks.slice().sort((a, b) => a.start_ms - b.start_ms);
  for (const t of tasks) {
    const lanes = rows.get(t.node);
    const end = t.end_ms || now;
    let lane = lanes.findIndex((free) => free <= t.start_ms);
    if (lane < 0) { lane = lanes.length; lanes.push(0); }
    lanes[lane] = end;
    t._lane = lane;
  }
  const LANE = 14, GAP = 6, LEFT = 70, W = 900;
  let y = 18;
  const rowY = new Map();
  for (const n of nodes) {
    rowY.set(n, y);
    y += Math.max(1, rows.get(n).length) * LANE + GAP;
  }
  const x = (ms) => LEFT + ((W - LEFT - 10) * Math.max(0, ms - t0)) / (t1 - t0);
  let svg = `<svg id="timeline-svg" width="${W}" height="${y + 4}" viewBox="0 0 ${W} ${y + 4}">`;
  const span = (t1 - t0) / 1000;
  const step = [0.1, 0.2, 0.5, 1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 1800].find((s) => span / s <= 10) || 3600;
  for (let s = 0; s <= span; s += step) {
    const xs = x(t0 + s * 1000);
    svg += `<line class="grid" x1="${xs}" x2="${xs}" y1="12" y2="${y}"/>` +
      `<text x="${xs + 2}" y="10">${+s.toFixed(1)}s</text>`;
  }
  const rackOf = new Map(workers.map((w) => [w.name, w.rack]));
  for (const n of nodes) {
    const ry = rowY.get(n);
    svg += `<text class="rowname" x="4" y="${ry + 11}">${esc(n)}</text>` +
      `<text x="34" y="${ry + 11}">${esc(rackOf.get(n) || '')}</text>`;
  }
  for (const t of tasks) {
    const level = t.kind === 'reduce' ? 'reduce' : (t.locality || 'running');
    const state = t.state === 'running' ? 'running' : (t.state === 'succeeded' ? '' : 'failed');
    const x0 = x(t.start_ms), x1 = Math.max(x0 + 2, x(t.end_ms || now));
    const ty = rowY.get(t.node) + t._lane * LANE;
    const b = t.bytes || {};
    const read = (b.cache || 0) + (b.local || 0) + (b.remote_rack || 0) + (b.remote_off_rack || 0) + (b.shuffle || 0);
    const tip = `${t.kind} ${t.index} attempt ${t.attempt} on ${t.node}: ${t.state}` +
      (t.locality ? ', ' + t.locality : '') + `, ${secs(t.runtime_s)}` +
      (read ? `, read ${bytes(read)}` : '') + (t.error ? ' — ' + t.error : '');
    svg += `<rect class="task ${t.kind} l-${level} ${state}" data-node="${esc(t.node)}" data-kind="${t.kind}" ` +
      `data-locality="${esc(t.locality || '')}" x="${x0.toFixed(1)}" y="${ty}" width="${(x1 - x0).toFixed(1)}" ` +
      `height="${LANE - 2}" rx="2"><title>${esc(tip)}</title></rect>`;
  }
  svg += '</svg>';
  return svg + '<div class="legend">' +
    LEVELS.map((l) => `<span><i class="l-${l}"></i>map, ${l}</span>`).join('') +
    '<span><i class="l-reduce"></i>reduce</span><span><i class="l-running"></i>map, running</span>' +
    '<span><i class="l-failed" style="border:1.5px solid var(--off_rack)"></i>failed attempt</span></div>';
}

/// Another's job: the master refused its details (403); show why, and the
/// summary every role sees in the list.
async function jobRefused(id, why) {
  const j = (await api('/api/jobs')).find((j) => String(j.job_id) === id);
  $('job-title').innerHTML = `job ${esc(id)}` + (j ? `: ${esc(j.job)} <span class="badge ${j.state}">${j.state}</span>` : '');
  $('job-summary').innerHTML = `<p class="error" id="job-refused">${esc(why)}</p>` + (j ? `<dl>
    <dt>progress</dt><dd class="progress">${progress(j)}</dd>
    <dt>owner</dt><dd>${esc(j.owner || 'admin')}</dd>
    <dt>time</dt><dd>${secs(j.exec_time_s)} with scheduler <b>${esc(j.scheduler)}</b></dd>
  </dl>` : '');
  $('job-details').hidden = true;
  document.body.dataset.loaded = 'job';
}

async function jobPage(id) {
  let job, c;
  try {
    [job, c] = await Promise.all([api('/api/jobs/' + encodeURIComponent(id)), api('/api/workers')]);
  } catch (e) {
    if (e instanceof Forbidden) return jobRefused(id, e.message);
    throw e;
  }
  $('job-details').hidden = false;
  renderWorkers(c);
  $('job-title').innerHTML = `job ${job.job_id}: ${esc(job.job)} <span class="badge ${job.state}">${job.state}</span>` +
    (isFinal(job.state) ? '' : ` <button class="kill" data-job="${job.job_id}">kill</button>`);
  const b = job.bytes || {};
  const rt = job.map_response_time_s || {};
  $('job-summary').innerHTML = `<dl>
    <dt>progress</dt><dd class="progress" id="job-progress">${progress(job)}</dd>
    <dt>owner</dt><dd>${esc(job.owner || 'admin')}</dd>
    <dt>time</dt><dd>${secs(job.exec_time_s)} with scheduler <b>${esc(job.scheduler)}</b></dd>
    <dt>input</dt><dd>${esc((job.input || []).join(', ')) || '(generated)'}</dd>
    <dt>output</dt><dd>${esc(job.output)}</dd>
    <dt>bytes read</dt><dd>cache ${bytes(b.cache)} · local ${bytes(b.local)} · remote rack ${bytes(b.remote_rack)} · remote off-rack ${bytes(b.remote_off_rack)} · shuffle ${bytes(b.shuffle)} · output ${bytes(b.output)}</dd>
    <dt>map response</dt><dd>mean ${secs(rt.mean)} · p50 ${secs(rt.p50)} · p95 ${secs(rt.p95)}</dd>
    ${job.error ? `<dt>error</dt><dd class="error">${esc(job.error)}</dd>` : ''}
  </dl>`;
  $('job-locality').innerHTML = localityBar(job.locality || {}) + legend(job.locality || {});
  $('timeline').innerHTML = timeline(job, c.workers);
  document.body.dataset.loaded = 'job';
}

// ------------------------------------------------------------ scheduler

async function scheduler() {
  const s = await api('/api/scheduler');
  const shown = s.name + ' ' + JSON.stringify(s.params);
  if (shown === schedulerShown) return;
  schedulerShown = shown;
  const sel = $('sched-name');
  sel.innerHTML = s.available.concat(s.available.includes(s.name) ? [] : [s.name])
    .map((n) => `<option${n === s.name ? ' selected' : ''}>${esc(n)}</option>`).join('');
  $('sched-params').value = Object.entries(s.params).map(([k, v]) => k + '=' + v).join(' ');
  $('sched-form').dataset.active = s.name;
  $('sched-form').hidden = false;
}

async function switchScheduler(ev) {
  ev.preventDefault();
  const params = {};
  for (const kv of $('sched-params').value.split(/\s+/).filter(Boolean)) {
    const i = kv.indexOf('=');
    if (i < 1) { $('sched-msg').textContent = `"${kv}" is not key=value`; return; }
    params[kv.slice(0, i)] = kv.slice(i + 1);
  }
  try {
    const s = await api('/api/scheduler', {
      method: 'PUT',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ name: $('sched-name').value, params }),
    });
    $('sched-msg').textContent = 'now ' + s.name;
    schedulerShown = '';
    await scheduler();
  } catch (e) {
    $('sched-msg').textContent = e.message;
  }
}

// ------------------------------------------------------------ loop

async function refresh() {
  clearTimeout(timer);
  const path = route();
  if (!token()) { showLogin(); return; }
  $('login').hidden = true;
  $('logout').hidden = false;
  const job = path.match(/^\/job\/(\d+)$/);
  $('overview').hidden = !!job;
  $('jobpage').hidden = !job;
  try {
    await Promise.all([job ? jobPage(job[1]) : overview(), scheduler()]);
    $('status').textContent = 'updated ' + new Date().toLocaleTimeString();
  } catch (e) {
    if (e instanceof Unauthorized) { showLogin(e.message); return; }
    $('status').textContent = 'cannot reach the master: ' + e.message;
  }
  timer = setTimeout(refresh, POLL_MS);
}

$('login-form').addEventListener('submit', (ev) => {
  ev.preventDefault();
  sessionStorage.setItem(TOKEN_KEY, $('token').value.trim());
  $('token').value = '';
  refresh();
});
$('logout').addEventListener('click', () => showLogin());
$('sched-form').addEventListener('submit', switchScheduler);
// Another policy takes other parameters: start it from its defaults.
$('sched-name').addEventListener('change', () => { $('sched-params').value = ''; });
document.addEventListener('click', async (ev) => {
  const b = ev.target.closest('button.kill');
  if (!b || !confirm(`Kill job ${b.dataset.job}?`)) return;
  try {
    await api(`/api/jobs/${b.dataset.job}/kill`, { method: 'POST' });
  } catch (e) {
    $('status').textContent = e.message;
  }
  refresh();
});
window.addEventListener('hashchange', refresh);
refresh();
