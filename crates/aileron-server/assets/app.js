// The Aileron dashboard: one page, no build step, no dependencies.
//
// Served by `aileron serve` under a `default-src 'self'` CSP, so there is no
// inline script or style here: markup lives in index.html, looks in app.css.
//
// Login: the server prints `http://ADDR/#token=TOKEN`. The token is read from
// the fragment, kept in sessionStorage (this tab only), removed from the URL,
// and sent as `Authorization: Bearer TOKEN` on every call. No cookies, so no
// other site can make the browser act with it.
'use strict';

(() => {
  const TOKEN_KEY = 'aileron.token';
  const VIEWS = ['pending', 'actions', 'rules'];
  const PAGE_SIZE = 50;
  const PREVIEW_LOOKBACK = 200;
  const PREVIEW_SAMPLES = 8;

  // ---------------------------------------------------------------- helpers

  const byTestId = (id, root = document) => root.querySelector(`[data-testid="${id}"]`);
  const el = (tag, props = {}, ...children) => {
    const node = document.createElement(tag);
    for (const [k, v] of Object.entries(props)) {
      if (v === undefined || v === null || v === false) continue;
      if (k === 'class') node.className = v;
      else if (k === 'text') node.textContent = v;
      else if (k.startsWith('data-') || k === 'title' || k === 'role' || k.startsWith('aria-')) node.setAttribute(k, v);
      else node[k] = v;
    }
    for (const c of children) {
      if (c === null || c === undefined || c === false) continue;
      node.append(c instanceof Node ? c : document.createTextNode(String(c)));
    }
    return node;
  };
  const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
  // The first value that is set; else the last one given (the default).
  const first = (...vals) => {
    const v = vals.find((x) => x !== undefined && x !== null && x !== '');
    return v === undefined ? vals[vals.length - 1] : v;
  };
  const isObj = (v) => v !== null && typeof v === 'object' && !Array.isArray(v);

  function debounce(fn, ms) {
    let t = null;
    const d = (...args) => {
      clearTimeout(t);
      t = setTimeout(() => fn(...args), ms);
    };
    d.cancel = () => clearTimeout(t);
    return d;
  }

  function showMessage(node, text) {
    if (!node) return;
    node.textContent = text || '';
    node.hidden = !text;
  }

  const pad2 = (n) => String(n).padStart(2, '0');
  function parseTime(v) {
    if (v === undefined || v === null || v === '') return null;
    const d = typeof v === 'number' ? new Date(v > 1e12 ? v : v * 1000) : new Date(v);
    return Number.isNaN(d.getTime()) ? null : d;
  }
  function fmtTime(v) {
    const d = parseTime(v);
    if (!d) return v ? String(v) : '';
    return `${d.getFullYear()}-${pad2(d.getMonth() + 1)}-${pad2(d.getDate())} ` +
      `${pad2(d.getHours())}:${pad2(d.getMinutes())}:${pad2(d.getSeconds())}`;
  }
  // A time of today as HH:MM:SS, another day's in full.
  function fmtClock(v) {
    const d = parseTime(v);
    if (!d) return v ? String(v) : '';
    if (d.toDateString() !== new Date().toDateString()) return fmtTime(v);
    return `${pad2(d.getHours())}:${pad2(d.getMinutes())}:${pad2(d.getSeconds())}`;
  }
  function fmtDuration(ms) {
    if (ms < 0) ms = 0;
    const s = Math.round(ms / 1000);
    if (s < 60) return `${s}s`;
    const m = Math.floor(s / 60);
    if (m < 60) return `${m}m ${pad2(s % 60)}s`;
    return `${Math.floor(m / 60)}h ${pad2(m % 60)}m`;
  }
  function fmtAgo(v) {
    const d = parseTime(v);
    if (!d) return '';
    return `${fmtDuration(Date.now() - d.getTime())} ago`;
  }

  const DECISIONS = ['allow', 'deny', 'ask', 'judge'];
  // SPEC 7: a rule without `priority` has its decision's.
  const DEFAULT_PRIORITY = { allow: 50, ask: 100, judge: 120, deny: 200 };
  function decisionName(d) {
    if (isObj(d)) d = d.kind || d.decision;
    d = String(d || '').toLowerCase();
    if (d === 'require_human') return 'ask';
    if (d === 'require_llm') return 'judge';
    return d;
  }
  function decisionBadge(decision, testid) {
    const d = decisionName(decision);
    return el('span', {
      class: `badge decision-${DECISIONS.includes(d) ? d : 'other'}`,
      text: d || '?',
      'data-decision': d,
      'data-testid': testid,
    });
  }

  // ------------------------------------------------------------ tiny YAML
  //
  // The matcher is edited as text (YAML or JSON) but the API takes JSON. This
  // reads the part of YAML a matcher needs: block mappings and sequences,
  // flow `{}` / `[]` (also over several lines), plain, 'single' and "double"
  // quoted scalars, comments. Anything else is an error with LINE:COL.

  class YamlError extends Error {
    constructor(line, col, message) {
      super(`when:${line}:${col}: error: ${message}`);
      this.line = line;
      this.col = col;
    }
  }

  function plainScalar(s) {
    if (/^(~|null|Null|NULL)$/.test(s) || s === '') return null;
    if (/^(true|True|TRUE)$/.test(s)) return true;
    if (/^(false|False|FALSE)$/.test(s)) return false;
    if (/^[-+]?(0|[1-9][0-9]*)$/.test(s)) return Number(s);
    if (/^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$/.test(s)) return Number(s);
    return s;
  }

  // A cursor over the whole text, for flow values and quoted scalars.
  function parseYaml(text) {
    const lines = text.replace(/\r\n?/g, '\n').split('\n');
    let li = 0; // current line index

    // Where a comment starts on a line (outside quotes), or -1.
    function commentAt(line, from) {
      let q = null;
      for (let i = from; i < line.length; i++) {
        const c = line[i];
        if (q) {
          if (q === '"' && c === '\\') i++;
          else if (c === q) q = null;
        } else if (c === '"' || c === "'") {
          if (i === from || /[\s[{,:]/.test(line[i - 1])) q = c;
        } else if (c === '#' && (i === 0 || /\s/.test(line[i - 1]))) return i;
      }
      return -1;
    }
    function content(i) {
      const line = lines[i];
      const c = commentAt(line, 0);
      return (c < 0 ? line : line.slice(0, c)).replace(/\s+$/, '');
    }
    function indentOf(i) {
      const m = /^[ \t]*/.exec(lines[i])[0];
      const tab = m.indexOf('\t');
      if (tab >= 0) throw new YamlError(i + 1, tab + 1, 'tabs cannot indent YAML: use spaces');
      return m.length;
    }
    function skipBlank() {
      while (li < lines.length && content(li).trim() === '') li++;
    }

    // Flow values and quoted scalars: a character cursor that may run on to
    // the next lines.
    function flow(line, col) {
      let l = line;
      let c = col;
      const at = () => (l < lines.length ? lines[l][c] : undefined);
      const err = (m) => new YamlError(l + 1, c + 1, m);
      function ws() {
        for (;;) {
          if (l >= lines.length) return;
          const s = lines[l];
          while (c < s.length && (s[c] === ' ' || s[c] === '\t')) c++;
          if (c < s.length && s[c] === '#' && (c === 0 || /\s/.test(s[c - 1]))) c = s.length;
          if (c < s.length) return;
          l++;
          c = 0;
        }
      }
      function quoted() {
        const q = at();
        const startL = l;
        const startC = c;
        c++;
        let out = '';
        for (;;) {
          if (l >= lines.length) throw new YamlError(startL + 1, startC + 1, 'unterminated quoted string');
          const s = lines[l];
          if (c >= s.length) {
            out += ' ';
            l++;
            c = 0;
            continue;
          }
          const ch = s[c];
          if (q === "'") {
            if (ch === "'") {
              if (s[c + 1] === "'") {
                out += "'";
                c += 2;
                continue;
              }
              c++;
              return out;
            }
            out += ch;
            c++;
          } else {
            if (ch === '"') {
              c++;
              return out;
            }
            if (ch === '\\') {
              const e = s[c + 1];
              const map = { n: '\n', t: '\t', r: '\r', '"': '"', '\\': '\\', '/': '/', 0: '\0', b: '\b', f: '\f', ' ': ' ' };
              if (e in map) {
                out += map[e];
                c += 2;
              } else if (e === 'x' || e === 'u' || e === 'U') {
                const n = { x: 2, u: 4, U: 8 }[e];
                const hex = s.slice(c + 2, c + 2 + n);
                if (!new RegExp(`^[0-9a-fA-F]{${n}}$`).test(hex)) throw err('bad escape in a double-quoted string');
                out += String.fromCodePoint(parseInt(hex, 16));
                c += 2 + n;
              } else {
                throw err(`unknown escape \\${e || ''}`);
              }
              continue;
            }
            out += ch;
            c++;
          }
        }
      }
      function plain(inFlow) {
        const s = lines[l];
        const start = c;
        while (c < s.length) {
          const ch = s[c];
          if (inFlow && /[,[\]{}]/.test(ch)) break;
          if (ch === ':' && (c + 1 >= s.length || /[\s,[\]{}]/.test(s[c + 1]))) break;
          if (ch === '#' && c > start && /\s/.test(s[c - 1])) break;
          c++;
        }
        return s.slice(start, c).trim();
      }
      function value() {
        ws();
        const ch = at();
        if (ch === undefined) throw err('unexpected end of text');
        if (ch === '{') return mapping();
        if (ch === '[') return sequence();
        if (ch === '"' || ch === "'") return quoted();
        if (/[&*!|>%@`]/.test(ch)) throw err(`\`${ch}\` (anchors, aliases, tags, block scalars) is not supported here`);
        const p = plain(true);
        if (p === '') throw err(`unexpected \`${ch}\``);
        return plainScalar(p);
      }
      function mapping() {
        const out = {};
        const openL = l;
        const openC = c;
        c++;
        for (;;) {
          ws();
          if (at() === undefined) throw new YamlError(openL + 1, openC + 1, 'this `{` is never closed');
          if (at() === '}') {
            c++;
            return out;
          }
          const kl = l;
          const kc = c;
          let key;
          if (at() === '"' || at() === "'") key = quoted();
          else {
            if (at() === undefined || /[,[\]{}]/.test(at())) throw err('expected a key');
            key = plain(true);
          }
          key = String(key);
          ws();
          let v = null;
          if (at() === ':') {
            c++;
            ws();
            if (at() !== ',' && at() !== '}') v = value();
          }
          if (Object.prototype.hasOwnProperty.call(out, key)) throw new YamlError(kl + 1, kc + 1, `duplicate key \`${key}\``);
          out[key] = v;
          ws();
          if (at() === undefined) throw new YamlError(openL + 1, openC + 1, 'this `{` is never closed');
          if (at() === ',') c++;
          else if (at() !== '}') throw err('expected `,` or `}`');
        }
      }
      function sequence() {
        const out = [];
        const openL = l;
        const openC = c;
        c++;
        for (;;) {
          ws();
          if (at() === undefined) throw new YamlError(openL + 1, openC + 1, 'this `[` is never closed');
          if (at() === ']') {
            c++;
            return out;
          }
          out.push(value());
          ws();
          if (at() === undefined) throw new YamlError(openL + 1, openC + 1, 'this `[` is never closed');
          if (at() === ',') c++;
          else if (at() !== ']') throw err('expected `,` or `]`');
        }
      }
      const v = value();
      // Only a comment may follow on the line where the value ends.
      const rest = l < lines.length ? content(l).slice(c).trim() : '';
      if (rest) throw new YamlError(l + 1, c + 1 + (lines[l].slice(c).length - lines[l].slice(c).trimStart().length), `unexpected \`${rest}\` after the value`);
      return { value: v, nextLine: l + 1 };
    }

    // An inline value after `key:` or `- ` on line i, at column col.
    function inline(i, col) {
      const s = content(i);
      const ch = s[col];
      if (ch === '{' || ch === '[' || ch === '"' || ch === "'") {
        const r = flow(i, col);
        li = r.nextLine;
        return r.value;
      }
      if (/[&*!|>%@`]/.test(ch)) throw new YamlError(i + 1, col + 1, `\`${ch}\` (anchors, aliases, tags, block scalars) is not supported here`);
      const text = s.slice(col).trim();
      if (/:(\s|$)/.test(text)) throw new YamlError(i + 1, col + 1 + text.search(/:(\s|$)/), 'a mapping cannot start here: put it on the next line, indented');
      li = i + 1;
      return plainScalar(text);
    }

    // `key:` at column col on line i: [key, column after the colon].
    function keyAt(i, col) {
      const s = content(i);
      if (s[col] === '"' || s[col] === "'") {
        const q = s[col];
        let k = col + 1;
        while (k < s.length && s[k] !== q) k += s[k] === '\\' && q === '"' ? 2 : 1;
        if (k >= s.length) return null;
        const raw = s.slice(col, k + 1);
        let key;
        if (q === "'") key = raw.slice(1, -1).replace(/''/g, "'");
        else {
          try {
            key = JSON.parse(raw);
          } catch {
            throw new YamlError(i + 1, col + 1, 'bad escape in a double-quoted key');
          }
        }
        let end = k + 1;
        while (s[end] === ' ') end++;
        if (s[end] !== ':' || !(end + 1 >= s.length || /\s/.test(s[end + 1]))) return null;
        return [key, end + 1];
      }
      const m = /^([^#{}[\],&*!|>'"%@`][^#]*?)\s*:(?=\s|$)/.exec(s.slice(col));
      if (!m) return null;
      return [m[1], col + m[0].length];
    }

    function block(indent) {
      skipBlank();
      if (li >= lines.length) return null;
      const s = content(li);
      const col = indentOf(li);
      if (col < indent) return null;
      if (/^-(\s|$)/.test(s.slice(col))) return blockSeq(col);
      if (keyAt(li, col)) return blockMap(col);
      const v = inline(li, col);
      skipBlank();
      if (li < lines.length && indentOf(li) >= indent) throw new YamlError(li + 1, indentOf(li) + 1, 'unexpected text after the value');
      return v;
    }

    // `firstCol`: the first key sits after a `- ` on a line of its own.
    function blockMap(indent, firstCol) {
      const out = {};
      let firstLine = firstCol === undefined ? -1 : li;
      for (;;) {
        skipBlank();
        if (li >= lines.length) return out;
        const col = li === firstLine ? firstCol : indentOf(li);
        firstLine = -1;
        if (col < indent) return out;
        if (col > indent) throw new YamlError(li + 1, col + 1, 'this line is indented more than the keys above it');
        const k = keyAt(li, col);
        if (!k) {
          if (/^-(\s|$)/.test(content(li).slice(col))) throw new YamlError(li + 1, col + 1, 'a list item where a key was expected');
          throw new YamlError(li + 1, col + 1, 'expected `key: value`');
        }
        const [key, after] = k;
        if (Object.prototype.hasOwnProperty.call(out, key)) throw new YamlError(li + 1, col + 1, `duplicate key \`${key}\``);
        const s = content(li);
        let vcol = after;
        while (s[vcol] === ' ') vcol++;
        if (vcol < s.length) {
          out[key] = inline(li, vcol);
        } else {
          li++;
          skipBlank();
          if (li < lines.length && indentOf(li) > indent) out[key] = block(indent + 1);
          else if (li < lines.length && indentOf(li) === indent && /^-(\s|$)/.test(content(li).slice(indent))) out[key] = blockSeq(indent);
          else out[key] = null;
        }
      }
    }

    function blockSeq(indent) {
      const out = [];
      for (;;) {
        skipBlank();
        if (li >= lines.length) return out;
        const col = indentOf(li);
        if (col < indent) return out;
        const s = content(li);
        if (col > indent) throw new YamlError(li + 1, col + 1, 'this line is indented more than the list above it');
        if (!/^-(\s|$)/.test(s.slice(col))) return out;
        let vcol = col + 1;
        while (s[vcol] === ' ') vcol++;
        if (vcol >= s.length) {
          li++;
          out.push(block(indent + 1));
        } else if (/^-(\s|$)/.test(s.slice(vcol))) {
          throw new YamlError(li + 1, vcol + 1, 'nested lists on one line are not supported here: use [a, b]');
        } else if (keyAt(li, vcol)) {
          // `- key: value` starts a mapping whose keys line up after the dash.
          out.push(blockMap(vcol, vcol));
        } else {
          out.push(inline(li, vcol));
        }
      }
    }

    skipBlank();
    if (li >= lines.length) return null;
    const top = indentOf(li);
    const v = block(top);
    skipBlank();
    if (li < lines.length) throw new YamlError(li + 1, indentOf(li) + 1, 'unexpected text: check the indentation');
    return v;
  }

  // The matcher text as a JSON value: JSON when it reads as JSON, else YAML.
  function readWhen(text) {
    const t = text.trim();
    if (t.startsWith('{') || t.startsWith('[')) {
      try {
        return JSON.parse(t);
      } catch {
        /* YAML flow, or an error YAML can place */
      }
    }
    return parseYaml(text);
  }

  // A JSON value as YAML: block mappings, flow for small leaf values.
  const PLAIN_OK = /^[A-Za-z_/.~$^(][^:#,[\]{}]*$/;
  function yamlScalar(v) {
    if (v === null) return 'null';
    if (typeof v === 'string') {
      const s = v;
      if (s !== '' && PLAIN_OK.test(s) && !/\s/.test(s) && s.trim() === s && !/^(true|false|null|yes|no|on|off|y|n|~)$/i.test(s) && typeof plainScalar(s) === 'string' && !/\s#/.test(s)) return s;
      return JSON.stringify(s);
    }
    return String(v);
  }
  function yamlFlow(v) {
    if (Array.isArray(v)) return `[${v.map(yamlFlow).join(', ')}]`;
    if (isObj(v)) return `{${Object.entries(v).map(([k, x]) => `${yamlScalar(k)}: ${yamlFlow(x)}`).join(', ')}}`;
    return yamlScalar(v);
  }
  function depth(v) {
    const kids = Array.isArray(v) ? v : isObj(v) ? Object.values(v) : null;
    return kids ? 1 + Math.max(0, ...kids.map(depth)) : 0;
  }
  function isLeafish(v) {
    return depth(v) <= 2 && yamlFlow(v).length <= 60;
  }
  function toYaml(v, indent = 0) {
    const pad = ' '.repeat(indent);
    if (isObj(v) && Object.keys(v).length) {
      return Object.entries(v)
        .map(([k, x]) => {
          const key = `${pad}${yamlScalar(k)}:`;
          if ((isObj(x) && Object.keys(x).length) || (Array.isArray(x) && x.length)) {
            if (isLeafish(x)) return `${key} ${yamlFlow(x)}\n`;
            return `${key}\n${toYaml(x, indent + 2)}`;
          }
          return `${key} ${yamlFlow(x)}\n`;
        })
        .join('');
    }
    if (Array.isArray(v) && v.length) {
      return v
        .map((x) => {
          if ((isObj(x) || Array.isArray(x)) && !isLeafish(x)) {
            const inner = toYaml(x, indent + 2);
            return `${pad}- ${inner.slice(indent + 2)}`;
          }
          return `${pad}- ${yamlFlow(x)}\n`;
        })
        .join('');
    }
    return `${pad}${yamlFlow(v)}\n`;
  }

  // ------------------------------------------------------------------ state

  const state = {
    token: null,
    view: null,
    pending: new Map(), // id -> normalized entry
    pendingNodes: new Map(), // id -> <li>
    streamAbort: null,
    // The log pages by cursor: `cursors[i]` fetches page i (null: newest).
    actions: { cursors: [null], page: 0, next: null, filters: {} },
    rules: [],
    judges: [], // the policy's LLM judges: {id, model, provider}
    editing: null, // the rule being edited (normalized) or {} for a new one
    validateSeq: 0,
  };

  // -------------------------------------------------------------------- API

  class ApiError extends Error {
    constructor(status, message, body) {
      super(message);
      this.status = status;
      this.body = body;
    }
  }

  function errorText(data, text) {
    if (typeof data === 'string') return data;
    if (isObj(data)) {
      const e = data.error;
      if (typeof e === 'string') return data.detail ? `${e}\n${data.detail}` : e;
      if (isObj(e) && e.message) return e.message;
      if (typeof data.message === 'string') return data.message;
      if (Array.isArray(data.errors)) {
        return data.errors.map((x) => (typeof x === 'string' ? x : x.message || JSON.stringify(x))).join('\n');
      }
    }
    return text;
  }

  async function api(method, path, body, opts = {}) {
    const headers = { Authorization: `Bearer ${state.token}`, Accept: 'application/json' };
    if (body !== undefined) headers['Content-Type'] = 'application/json';
    let res;
    try {
      res = await fetch(path, {
        method,
        headers,
        body: body === undefined ? undefined : JSON.stringify(body),
        credentials: 'omit',
        cache: 'no-store',
        signal: opts.signal,
      });
    } catch (e) {
      if (e && e.name === 'AbortError') throw e;
      throw new ApiError(0, `Cannot reach the server (${e.message || e}).`);
    }
    if (res.status === 401) {
      signOut('The server did not accept the token (401). It may have restarted with a new one: paste the token it printed.');
      throw new ApiError(401, 'unauthorized');
    }
    const text = await res.text();
    let data = null;
    if (text) {
      try {
        data = JSON.parse(text);
      } catch {
        data = null;
      }
    }
    if (!res.ok) {
      let msg = errorText(data, text) || `${res.status} ${res.statusText}`;
      if (res.status === 403 && !msg) msg = 'This token may not do that.';
      throw new ApiError(res.status, msg, data);
    }
    return data;
  }

  const listOf = (data, ...keys) => {
    if (Array.isArray(data)) return data;
    if (!isObj(data)) return [];
    for (const k of keys) if (Array.isArray(data[k])) return data[k];
    return [];
  };

  // ------------------------------------------------------------------ login

  function tokenFromFragment() {
    const hash = location.hash.replace(/^#/, '');
    // `#token=T`, also `#/rules?token=T` or `#/rules&token=T`.
    const m = /(?:^|[?&/])token=([^&]*)/.exec(hash);
    if (!m) return null;
    let token = m[1];
    try {
      token = decodeURIComponent(token);
    } catch {
      /* keep it as written */
    }
    const rest = hash.slice(0, m.index).replace(/[?&]$/, '');
    const route = rest.startsWith('/') ? `#${rest}` : '#/pending';
    history.replaceState(null, '', `${location.pathname}${location.search}${route}`);
    return token.trim() || null;
  }

  function signIn(token) {
    state.token = token;
    try {
      sessionStorage.setItem(TOKEN_KEY, token);
    } catch {
      /* private mode: keep it in memory only */
    }
    showMessage(byTestId('login-message'), '');
    byTestId('nav').hidden = false;
    byTestId('session-bar').hidden = false;
    startStream();
    if (!VIEWS.includes(routeName())) history.replaceState(null, '', '#/pending');
    route();
  }

  function signOut(message) {
    const wasIn = state.token !== null || state.view !== 'login';
    state.token = null;
    try {
      sessionStorage.removeItem(TOKEN_KEY);
    } catch {
      /* nothing stored */
    }
    stopStream();
    state.pending.clear();
    for (const node of state.pendingNodes.values()) node.remove();
    state.pendingNodes.clear();
    updatePendingCount();
    byTestId('nav').hidden = true;
    byTestId('session-bar').hidden = true;
    showMessage(byTestId('login-message'), message || '');
    showView('login');
    // A late answer must not wipe a token being typed.
    if (!wasIn) return;
    banner('');
    const input = byTestId('login-token');
    input.value = '';
    input.focus();
  }

  // ---------------------------------------------------------------- routing

  function routeName() {
    const m = /^#\/?([a-z]+)/.exec(location.hash);
    return m ? m[1] : '';
  }

  function showView(name) {
    for (const section of document.querySelectorAll('main > .view')) {
      section.hidden = section.id !== `view-${name}`;
    }
    for (const tab of document.querySelectorAll('.tab')) {
      if (tab.dataset.view === name) tab.setAttribute('aria-current', 'page');
      else tab.removeAttribute('aria-current');
    }
    state.view = name;
  }

  function route() {
    if (!state.token) {
      showView('login');
      return;
    }
    let name = routeName();
    if (!VIEWS.includes(name)) name = 'pending';
    showView(name);
    if (name === 'pending') loadPending();
    if (name === 'actions') loadActions();
    if (name === 'rules') loadRules();
  }

  // --------------------------------------------------------------- pending

  function normPending(e) {
    const a = isObj(e.action) ? e.action : isObj(e.record) ? e.record : e;
    const session = isObj(a.session) ? a.session : {};
    const verdict = isObj(e.verdict) ? e.verdict : {};
    const created = first(e.created_at, e.requested_at, e.createdAt, e.asked_at, e.time, a.timestamp);
    let deadline = parseTime(first(e.expires_at, e.deadline, e.expiresAt, e.timeout_at));
    if (!deadline) {
      const secs = first(e.timeout_secs, e.timeout_s, typeof e.timeout === 'number' ? e.timeout : undefined);
      const ms = first(e.timeout_ms, e.timeoutMs, secs !== undefined ? secs * 1000 : undefined);
      const c = parseTime(created);
      if (ms && c) deadline = new Date(c.getTime() + Number(ms));
    }
    return {
      id: String(first(e.id, e.pending_id, e.pendingId, a.id)),
      summary: first(a.summary, e.summary, a.type, ''),
      type: first(a.type, e.type, ''),
      session: first(session.id, e.session_id, e.sessionId, typeof e.session === 'string' ? e.session : undefined, ''),
      agent: first(session.agent, e.agent, ''),
      cwd: first(session.cwd, e.cwd, ''),
      rule: first(e.rule_id, e.ruleId, typeof e.rule === 'string' ? e.rule : undefined, verdict.rule, ''),
      reason: first(e.reason, verdict.reason, a.description, ''),
      decision: decisionName(first(e.decision, verdict.decision, 'ask')),
      onTimeout: first(e.on_timeout, e.onTimeout, ''),
      approver: first(e.approver, ''),
      // The LLM judge that sent it on to a person: {name, model, reason}.
      judge: isObj(e.judge) ? e.judge : null,
      facets: isObj(a.facets) ? a.facets : null,
      created,
      deadline,
    };
  }

  async function loadPending() {
    if (!state.token) return;
    try {
      const data = await api('GET', '/api/pending-actions');
      replacePending(listOf(data, 'pending', 'items', 'actions', 'pending_actions'));
    } catch (e) {
      if (e.status !== 401) banner(`Could not load pending approvals: ${e.message}`);
    }
  }
  const refreshPendingSoon = debounce(loadPending, 150);

  function replacePending(entries) {
    const seen = new Set();
    for (const raw of entries) {
      const p = normPending(raw);
      seen.add(p.id);
      state.pending.set(p.id, p);
    }
    for (const id of [...state.pending.keys()]) if (!seen.has(id)) state.pending.delete(id);
    renderPending();
  }

  function upsertPending(raw) {
    const p = normPending(raw);
    if (!p.id || p.id === 'undefined') return false;
    state.pending.set(p.id, p);
    renderPending();
    return true;
  }

  function removePending(id) {
    state.pending.delete(String(id));
    renderPending();
  }

  function renderPending() {
    const list = byTestId('pending-list');
    // Drop cards whose request is gone; keep the others as they are, so a
    // half-typed feedback survives an update.
    for (const [id, node] of state.pendingNodes) {
      if (!state.pending.has(id)) {
        node.remove();
        state.pendingNodes.delete(id);
      }
    }
    const ordered = [...state.pending.values()].sort((a, b) => {
      const ta = parseTime(a.created)?.getTime() ?? 0;
      const tb = parseTime(b.created)?.getTime() ?? 0;
      return ta - tb;
    });
    for (const p of ordered) {
      let node = state.pendingNodes.get(p.id);
      if (!node) {
        node = pendingCard(p);
        state.pendingNodes.set(p.id, node);
      }
      fillPendingCard(node, p);
      list.append(node); // moves it into order
    }
    byTestId('pending-empty').hidden = state.pending.size > 0;
    updatePendingCount();
  }

  function updatePendingCount() {
    const n = state.pending.size;
    const count = byTestId('pending-count');
    count.textContent = String(n);
    count.hidden = n === 0;
    document.title = n ? `(${n}) Aileron` : 'Aileron';
  }

  function pendingCard(p) {
    const node = document.getElementById('tpl-pending').content.firstElementChild.cloneNode(true);
    node.dataset.id = p.id;
    const feedbackForm = node.querySelector('form.feedback');
    const textarea = feedbackForm.querySelector('textarea');
    const label = feedbackForm.querySelector('label');
    textarea.id = `feedback-${p.id}`;
    label.htmlFor = textarea.id;
    // Each card's buttons name what they answer, for screen readers.
    const summary = node.querySelector('[data-testid="pending-summary"]');
    summary.id = `pending-summary-${p.id}`;
    for (const b of node.querySelectorAll('button')) b.setAttribute('aria-describedby', summary.id);
    for (const button of node.querySelectorAll('[data-answer]')) {
      button.addEventListener('click', () => {
        const answer = button.dataset.answer;
        if (answer === 'feedback-open') {
          feedbackForm.hidden = !feedbackForm.hidden;
          button.setAttribute('aria-expanded', String(!feedbackForm.hidden));
          if (!feedbackForm.hidden) textarea.focus();
          return;
        }
        decide(node, answer, '');
      });
    }
    feedbackForm.addEventListener('submit', (ev) => {
      ev.preventDefault();
      const reason = textarea.value.trim();
      if (!reason) {
        textarea.focus();
        return;
      }
      decide(node, 'feedback', reason);
    });
    return node;
  }

  function fillPendingCard(node, p) {
    const set = (field, text) => {
      const f = node.querySelector(`[data-field="${field}"]`);
      if (f && f.textContent !== text) f.textContent = text;
      if (f && f.closest('dl')) f.parentElement.hidden = !text;
    };
    const badge = node.querySelector('[data-testid="pending-decision"]');
    badge.textContent = p.decision;
    badge.className = `badge decision-${DECISIONS.includes(p.decision) ? p.decision : 'other'}`;
    badge.dataset.decision = p.decision;
    node.querySelector('[data-testid="pending-summary"]').textContent = p.summary;
    set('type', p.type);
    set('session', [p.session, p.agent].filter(Boolean).join(' · '));
    set('cwd', p.cwd);
    set('rule', p.rule);
    set('age', fmtClock(p.created));
    set('reason', p.reason);
    node.querySelector('[data-field="reason"]').hidden = !p.reason;
    const j = p.judge;
    set('judge', j ? `The LLM judge ${j.name || '?'}${j.model ? ` (${j.model})` : ''} asks a person: ${j.reason || ''}` : '');
    node.querySelector('[data-field="judge"]').hidden = !j;
    const facets = node.querySelector('details.facets');
    facets.hidden = !p.facets || Object.keys(p.facets).length === 0;
    if (p.facets) set('facets', JSON.stringify(p.facets, null, 2));
    tickCard(node, p);
  }

  function tickCard(node, p) {
    const left = node.querySelector('[data-field="left"]');
    if (!p.deadline) {
      left.parentElement.hidden = true;
      return;
    }
    left.parentElement.hidden = false;
    const ms = p.deadline.getTime() - Date.now();
    const then = p.onTimeout ? `, then ${p.onTimeout}` : '';
    left.textContent = ms > 0 ? `${fmtDuration(ms)}${then}` : 'timing out';
    left.classList.toggle('urgent', ms < 30000);
  }

  setInterval(() => {
    for (const [id, node] of state.pendingNodes) {
      const p = state.pending.get(id);
      if (p) tickCard(node, p);
    }
  }, 1000);

  const ANSWER_TEXT = {
    once: 'Allowed once',
    always: 'Allowed always',
    reject: 'Rejected',
    feedback: 'Rejected with feedback',
  };

  async function decide(node, decision, reason) {
    const id = node.dataset.id;
    const p = state.pending.get(id);
    const err = node.querySelector('[data-field="error"]');
    showMessage(err, '');
    const buttons = node.querySelectorAll('button');
    for (const b of buttons) b.disabled = true;
    node.classList.add('busy');
    try {
      const body = { decision };
      if (reason) body.reason = reason;
      await api('POST', `/api/pending-actions/${encodeURIComponent(id)}/decision`, body);
      toast(`${ANSWER_TEXT[decision] || decision}: ${p ? p.summary : id}`, decision === 'once' || decision === 'always' ? 'allow' : 'deny');
      removePending(id);
      refreshActionsIfShown();
    } catch (e) {
      if (e.status === 401) return;
      if (e.status === 404 || e.status === 409 || e.status === 410) {
        toast(`Already answered or timed out: ${p ? p.summary : id}`, 'other');
        removePending(id);
        return;
      }
      showMessage(err, e.message);
    } finally {
      for (const b of buttons) b.disabled = false;
      node.classList.remove('busy');
    }
  }

  // Server-sent events over fetch: EventSource cannot send a bearer header.
  function startStream() {
    stopStream();
    const ctrl = new AbortController();
    state.streamAbort = ctrl;
    runStream(ctrl.signal);
  }

  function stopStream() {
    if (state.streamAbort) state.streamAbort.abort();
    state.streamAbort = null;
    setLive('off');
  }

  function setLive(s) {
    const live = byTestId('live-status');
    live.dataset.state = s;
    live.querySelector('.live-text').textContent = { live: 'live', connecting: 'connecting…', off: 'offline' }[s];
  }

  async function runStream(signal) {
    let delay = 1000;
    while (!signal.aborted && state.token) {
      try {
        setLive('connecting');
        const res = await fetch('/api/pending-actions/stream', {
          headers: { Authorization: `Bearer ${state.token}`, Accept: 'text/event-stream' },
          credentials: 'omit',
          cache: 'no-store',
          signal,
        });
        if (res.status === 401) {
          signOut('The server did not accept the token (401). It may have restarted with a new one: paste the token it printed.');
          return;
        }
        if (res.status === 403) {
          // An agent's token: it may not watch or decide approvals.
          let msg = '';
          try {
            msg = errorText(await res.json(), '');
          } catch {
            /* no body */
          }
          banner(`Live approvals are not available with this token: ${msg || 'forbidden (403)'}.`);
          setLive('off');
          return;
        }
        if (!res.ok || !res.body) throw new Error(`stream answered ${res.status}`);
        setLive('live');
        delay = 1000;
        loadPending(); // whatever arrived before we were listening
        const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
        let buf = '';
        for (;;) {
          const { value, done } = await reader.read();
          if (done) break;
          buf = (buf + value).replace(/\r\n?/g, '\n');
          let i;
          while ((i = buf.indexOf('\n\n')) >= 0) {
            const block = buf.slice(0, i);
            buf = buf.slice(i + 2);
            handleSseBlock(block);
          }
        }
      } catch (e) {
        if (signal.aborted) return;
      }
      if (signal.aborted) return;
      setLive('off');
      await sleep(delay);
      delay = Math.min(delay * 2, 15000);
    }
  }

  function handleSseBlock(block) {
    let event = 'message';
    const data = [];
    for (const line of block.split('\n')) {
      if (!line || line.startsWith(':')) continue;
      const c = line.indexOf(':');
      const field = c < 0 ? line : line.slice(0, c);
      let value = c < 0 ? '' : line.slice(c + 1);
      if (value.startsWith(' ')) value = value.slice(1);
      if (field === 'event') event = value;
      else if (field === 'data') data.push(value);
    }
    if (data.length === 0) return;
    let payload = data.join('\n');
    try {
      payload = JSON.parse(payload);
    } catch {
      /* plain text: an id */
    }
    applyPendingEvent(event, payload);
  }

  const REMOVAL = /^(removed?|resolved|decided|answered|deleted|expired|timeout|timed_out|done|closed)$/i;
  const ADDITION = /^(pending|added?|new|created|request(ed)?|message|upsert|updated?)$/i;

  function applyPendingEvent(event, payload) {
    let kind = event;
    let body = payload;
    // `{type|kind|event: "added", entry|pending|item: {...}}` envelopes.
    if (isObj(payload) && event === 'message') {
      const k = first(payload.event, payload.kind, typeof payload.type === 'string' && !payload.summary ? payload.type : undefined);
      if (k && (REMOVAL.test(k) || ADDITION.test(k) || k === 'snapshot')) {
        kind = k;
        body = first(payload.entry, payload.pending, payload.item, payload.data, payload.action && payload.id === undefined ? payload.action : undefined, payload);
      }
    }
    let applied = false;
    if (/^(snapshot|init|hello|list)$/i.test(kind)) {
      const list = listOf(body, 'pending', 'items', 'actions', 'pending_actions');
      replacePending(list);
      applied = true;
    } else if (REMOVAL.test(kind)) {
      const id = isObj(body) ? first(body.id, body.pending_id, body.action_id, isObj(body.action) ? body.action.id : undefined) : body;
      if (id !== undefined && id !== null && id !== '') {
        removePending(id);
        applied = true;
      }
    } else if (ADDITION.test(kind) && isObj(body)) {
      applied = upsertPending(body);
    }
    if (!applied) refreshPendingSoon();
    refreshActionsIfShown();
  }

  // --------------------------------------------------------------- actions

  function readFilters() {
    const form = byTestId('actions-filters');
    const f = {};
    for (const name of ['session', 'decision', 'type']) {
      const v = form.elements[name].value.trim();
      if (v) f[name] = v;
    }
    // `10m`, `2h`, `1d`, a date, or a local date and time (sent as UTC).
    for (const name of ['since', 'until']) {
      const v = form.elements[name].value.trim();
      if (!v) continue;
      if (/^\d{4}-\d{2}-\d{2}[T ]\d{1,2}:\d{2}(:\d{2})?$/.test(v)) {
        const d = new Date(v.replace(' ', 'T'));
        f[name] = Number.isNaN(d.getTime()) ? v : d.toISOString();
      } else {
        f[name] = v;
      }
    }
    return f;
  }

  function normRecord(r) {
    const a = isObj(r.action) ? r.action : r;
    const session = isObj(r.session) ? r.session : isObj(a.session) ? a.session : null;
    return {
      time: first(r.time, r.timestamp, r.created_at, a.timestamp),
      decision: decisionName(first(r.decision, isObj(r.verdict) ? r.verdict.decision : undefined)),
      outcome: first(r.outcome, ''),
      summary: first(a.summary, r.summary, ''),
      type: first(a.type, r.type, ''),
      session: first(session ? session.id : undefined, typeof r.session === 'string' ? r.session : undefined, r.session_id, ''),
      agent: first(r.agent, session ? session.agent : undefined, ''),
      source: first(r.source, isObj(r.verdict) ? r.verdict.source : undefined, ''),
      rule: first(typeof r.rule === 'string' ? r.rule : undefined, r.rule_id, isObj(r.verdict) ? r.verdict.rule : undefined, ''),
      reason: first(r.reason, isObj(r.verdict) ? r.verdict.reason : undefined, ''),
      approver: first(r.approver, ''),
      judge: isObj(r.judge) ? r.judge : null,
    };
  }

  // One line about an LLM judge's call: who, what, cached, tokens, time.
  function judgeText(j) {
    const parts = [`judge ${j.name || '?'}`];
    if (j.model) parts.push(j.model);
    if (j.verdict) parts.push(j.verdict === 'error' ? 'no verdict' : j.verdict);
    if (j.cached) parts.push('cached');
    else {
      const p = j.prompt_tokens;
      const c = j.completion_tokens;
      if (p !== undefined || c !== undefined) parts.push(`${p ?? '?'} + ${c ?? '?'} tokens`);
    }
    if (typeof j.latency_ms === 'number') parts.push(`${j.latency_ms} ms`);
    return parts.join(' · ');
  }

  let actionsCtrl = null;
  async function loadActions() {
    if (!state.token) return;
    const s = state.actions;
    const params = new URLSearchParams();
    for (const [k, v] of Object.entries(s.filters)) params.set(k, v);
    params.set('limit', String(PAGE_SIZE));
    const cursor = s.cursors[s.page];
    if (cursor !== null && cursor !== undefined) params.set('cursor', String(cursor));
    if (actionsCtrl) actionsCtrl.abort();
    actionsCtrl = new AbortController();
    const errNode = byTestId('actions-error');
    try {
      const data = await api('GET', `/api/actions?${params}`, undefined, { signal: actionsCtrl.signal });
      showMessage(errNode, '');
      const rows = listOf(data, 'actions', 'items', 'records', 'results');
      s.next = isObj(data) ? first(data.next_cursor, data.nextCursor, data.next, null) : null;
      renderActions(rows.map(normRecord));
    } catch (e) {
      if (e.name === 'AbortError' || e.status === 401) return;
      showMessage(errNode, `Could not load the action log: ${e.message}`);
    }
  }
  const refreshActionsSoon = debounce(loadActions, 400);
  function refreshActionsIfShown() {
    if (state.view === 'actions' && state.actions.page === 0) refreshActionsSoon();
  }

  function renderActions(rows) {
    const body = byTestId('actions-body');
    body.replaceChildren(
      ...rows.map((r) => {
        const verdict = el('td', { class: 'col-decision' }, decisionBadge(r.decision, 'action-decision'));
        if (r.outcome) {
          const allowed = /^(approved|timeout-allow|allow)/.test(r.outcome);
          verdict.append(el('span', { class: `outcome ${allowed ? 'outcome-allow' : 'outcome-deny'}`, text: `→ ${r.outcome}`, 'data-testid': 'action-outcome' }));
        }
        const why = el('td', { class: 'col-why' });
        if (r.rule) why.append(el('code', { class: 'rule-id', text: r.rule }));
        if (r.source) why.append(el('span', { class: 'source', text: r.source }));
        if (r.reason) why.append(el('div', { class: 'reason', text: r.reason }));
        if (r.approver) why.append(el('div', { class: 'muted small', text: `approver: ${r.approver}` }));
        if (r.judge) {
          why.append(el('div', { class: 'judge-call small', text: judgeText(r.judge), 'data-testid': 'action-judge', 'data-cached': String(!!r.judge.cached) }));
        }
        return el(
          'tr',
          { 'data-testid': 'action-row', 'data-decision': r.decision, class: `row-${r.decision}` },
          el('td', { class: 'col-time', title: r.time || '', text: fmtTime(r.time) }),
          verdict,
          el('td', { class: 'col-summary' }, el('code', { text: r.summary })),
          el('td', { class: 'col-type', text: r.type }),
          el('td', { class: 'col-session', text: [r.session, r.agent].filter(Boolean).join(' · ') }),
          why,
        );
      }),
    );
    const s = state.actions;
    const empty = byTestId('actions-empty');
    empty.hidden = rows.length > 0;
    empty.textContent = s.page > 0 ? 'No older actions.' : 'No actions match.';
    const from = s.page * PAGE_SIZE + 1;
    byTestId('page-info').textContent = rows.length ? `${from}–${from + rows.length - 1}` : '';
    byTestId('page-prev').disabled = s.page === 0;
    byTestId('page-next').disabled = s.next === null || s.next === undefined;
  }

  // ----------------------------------------------------------------- rules

  // Match keys of a long-form rule that the editor does not edit but keeps.
  const KEPT_KEYS = ['command', 'binary', 'args_contain', 'working_dir', 'override'];

  function normRule(r) {
    const scope = isObj(r.scope)
      ? r.scope
      : {
          plugin: first(r.scope_plugin_id, r.scopePluginId),
          profile: first(r.scope_profile_id, r.scopeProfileId),
          integration: first(r.scope_integration_id, r.scopeIntegrationId),
        };
    const approver = isObj(r.approver) ? r.approver : {};
    const judge = isObj(r.judge) ? r.judge : {};
    let whenText = '';
    const whenSrc = first(r.when_source, r.whenSource, typeof r.when === 'string' ? r.when : undefined);
    if (whenSrc !== undefined) whenText = whenSrc;
    else if (r.when !== undefined && r.when !== null) whenText = toYaml(r.when);
    else if (typeof r.source === 'string') whenText = r.source;
    const kept = {};
    for (const k of KEPT_KEYS) if (r[k] !== undefined && r[k] !== null) kept[k] = r[k];
    const flowPairs = (m) => Object.entries(m).map(([k, x]) => `${yamlScalar(k)}: ${yamlFlow(x)}`).join(', ');
    let whenShort = whenText.replace(/\s+/g, ' ').trim();
    if (isObj(r.when)) whenShort = flowPairs(r.when);
    const keptShort = flowPairs(kept);
    if (keptShort) whenShort = whenShort ? `${keptShort}; ${whenShort}` : keptShort;
    return {
      whenShort,
      kept,
      keptShort,
      raw: r,
      id: String(first(r.id, '')),
      label: first(r.label, ''),
      description: first(r.description, r.reason, ''),
      decision: decisionName(r.decision),
      priority: typeof r.priority === 'number' ? r.priority : null,
      enabled: !(r.enabled === false || r.enabled === 0),
      scope: { plugin: scope.plugin || '', profile: scope.profile || '', integration: scope.integration || '' },
      when: whenText,
      approver: first(typeof r.approver === 'string' ? r.approver : undefined, approver.approver, ''),
      timeout: first(r.timeout, approver.timeout, r.timeout_ms !== undefined && r.timeout_ms !== null ? r.timeout_ms / 1000 : undefined, ''),
      on_timeout: first(r.on_timeout, approver.on_timeout, r.onTimeout, ''),
      judge: first(typeof r.judge === 'string' ? r.judge : undefined, judge.judge, ''),
      model: first(r.model, judge.model, r.llm_model, ''),
      prompt: first(r.prompt, judge.prompt, r.llm_prompt, ''),
      cache_ttl: first(r.cache_ttl, judge.cache_ttl, r.llm_cache_ttl_s, ''),
      fail_closed: first(r.fail_closed, judge.fail_closed, r.llm_fail_closed, true) !== false,
      updated: first(r.updated_at, r.updatedAt, ''),
    };
  }

  // The judges a `judge` rule may name: those of the server's policy.
  async function loadJudges() {
    try {
      const data = await api('GET', '/api/approvers');
      state.judges = listOf(isObj(data) ? data.llm : [], 'judges')
        .filter(isObj)
        .map((j) => ({ id: String(first(j.id, j.name, '')), model: first(j.model, ''), provider: first(j.provider, '') }))
        .filter((j) => j.id);
    } catch (e) {
      state.judges = [];
    }
  }

  // The judge field: any name, offered the judges of the server's policy
  // (a name the policy does not define is kept, and saving says why).
  function fillJudges(current) {
    const list = byTestId('rule-judges');
    list.replaceChildren(
      ...state.judges.map((j) => {
        const about = [j.provider, j.model].filter(Boolean).join(', ');
        return el('option', { value: j.id, label: about ? `${j.id} (${about})` : j.id });
      }),
    );
    editor().elements.judge.value = current || '';
  }

  function scopeText(scope) {
    const parts = [];
    for (const k of ['plugin', 'profile', 'integration']) if (scope[k]) parts.push(`${k}=${scope[k]}`);
    return parts.length ? parts.join(', ') : 'global';
  }

  async function loadRules() {
    if (!state.token) return;
    const errNode = byTestId('rules-error');
    try {
      const [data] = await Promise.all([api('GET', '/api/rules'), loadJudges()]);
      showMessage(errNode, '');
      state.rules = listOf(data, 'rules', 'items').map(normRule);
      renderRules();
    } catch (e) {
      if (e.status !== 401) showMessage(errNode, `Could not load rules: ${e.message}`);
    }
  }

  function renderRules(highlight) {
    const body = byTestId('rules-body');
    body.replaceChildren(
      ...state.rules.map((r) => {
        const edit = el('button', { type: 'button', class: 'btn btn-small', text: 'Edit', 'data-testid': 'rule-edit', 'aria-label': `Edit rule ${r.id}` });
        const del = el('button', { type: 'button', class: 'btn btn-small btn-deny-outline', text: 'Delete', 'data-testid': 'rule-delete', 'aria-label': `Delete rule ${r.id}` });
        edit.addEventListener('click', () => openEditor(r));
        del.addEventListener('click', () => deleteRule(r));
        const name = el('td', { class: 'col-rule' }, el('code', { text: r.id, 'data-testid': 'rule-row-id' }));
        const about = first(r.label, r.description);
        if (about) name.append(el('div', { class: 'muted small', text: about, title: r.description || undefined }));
        const when = r.whenShort;
        const tr = el(
          'tr',
          {
            'data-testid': 'rule-row',
            'data-rule-id': r.id,
            class: `${r.enabled ? '' : 'disabled'} ${highlight && highlight === r.id ? 'flash' : ''}`.trim(),
          },
          name,
          el('td', {}, decisionBadge(r.decision, 'rule-row-decision')),
          el('td', { class: 'num', text: r.priority === null ? `${DEFAULT_PRIORITY[r.decision] ?? ''}` : String(r.priority), title: r.priority === null ? 'the default of its decision' : undefined }),
          el('td', { text: scopeText(r.scope) }),
          el('td', { class: 'col-when' }, el('code', { text: when.length > 90 ? `${when.slice(0, 89)}…` : when, title: r.when })),
          el('td', { text: r.enabled ? 'yes' : 'no', 'data-testid': 'rule-row-enabled' }),
          el('td', { class: 'row-buttons' }, edit, del),
        );
        return tr;
      }),
    );
    byTestId('rules-empty').hidden = state.rules.length > 0;
  }

  const editor = () => byTestId('rule-editor');

  function openEditor(rule) {
    const form = editor();
    const r = rule || normRule({ decision: 'deny', enabled: true, when: 'type: shell.exec\nshell.command: {glob: "git push *"}' });
    if (!rule) r.when = 'type: shell.exec\nshell.command: {glob: "git push *"}';
    state.editing = rule || null;
    byTestId('editor-title').textContent = rule ? `Edit rule ${rule.id}` : 'New rule';
    showSavedWarnings('', []);
    const f = form.elements;
    f.id.value = r.id;
    f.id.readOnly = !!rule;
    f.label.value = r.label;
    f.description.value = r.description;
    const extra = byTestId('rule-extra');
    extra.textContent = r.keptShort ? `Also matches (kept as written): ${r.keptShort}` : '';
    extra.hidden = !r.keptShort;
    f.decision.value = DECISIONS.includes(r.decision) ? r.decision : 'deny';
    f.priority.value = r.priority === null ? '' : r.priority;
    f.enabled.checked = r.enabled;
    f.scope_plugin.value = r.scope.plugin;
    f.scope_profile.value = r.scope.profile;
    f.scope_integration.value = r.scope.integration;
    f.approver.value = r.approver;
    f.timeout.value = r.timeout;
    f.on_timeout.value = r.on_timeout;
    fillJudges(r.judge);
    f.model.value = r.model;
    f.prompt.value = r.prompt;
    f.cache_ttl.value = r.cache_ttl;
    f.fail_closed.checked = r.fail_closed;
    f.when.value = r.when;
    syncDecisionFields();
    setValidation('idle', '');
    hidePreview();
    showMessage(byTestId('rule-save-error'), '');
    form.hidden = false;
    form.scrollIntoView({ block: 'nearest' });
    f.when.focus();
    validateSoon();
  }

  function closeEditor() {
    validateSoon.cancel();
    state.validateSeq++;
    editor().hidden = true;
    state.editing = null;
  }

  function syncDecisionFields() {
    const d = editor().elements.decision.value;
    for (const fs of editor().querySelectorAll('[data-decision-fields]')) {
      fs.hidden = fs.dataset.decisionFields !== d;
    }
  }

  // The draft as the API takes it: the rule's fields as JSON, and the
  // matcher as the text typed (YAML or JSON), so that the loader's
  // FILE:LINE:COL points into what the user sees.
  function draftFromForm() {
    const f = editor().elements;
    const d = f.decision.value;
    const draft = { decision: d, enabled: f.enabled.checked };
    const id = f.id.value.trim();
    if (id) draft.id = id;
    const label = f.label.value.trim();
    if (label) draft.label = label;
    const desc = f.description.value.trim();
    if (desc) draft.description = desc;
    if (state.editing) Object.assign(draft, state.editing.kept);
    const prio = f.priority.value.trim();
    if (prio !== '') draft.priority = Number(prio);
    const scope = {};
    for (const k of ['plugin', 'profile', 'integration']) {
      const v = f[`scope_${k}`].value.trim();
      if (v) scope[k] = v;
    }
    if (Object.keys(scope).length) draft.scope = scope;
    if (d === 'ask') {
      if (f.approver.value.trim()) draft.approver = f.approver.value.trim();
      if (f.timeout.value.trim() !== '') draft.timeout = Number(f.timeout.value);
      if (f.on_timeout.value) draft.on_timeout = f.on_timeout.value;
    }
    if (d === 'judge') {
      if (f.judge.value.trim()) draft.judge = f.judge.value.trim();
      if (f.model.value.trim()) draft.model = f.model.value.trim();
      if (f.prompt.value.trim()) draft.prompt = f.prompt.value;
      if (f.cache_ttl.value.trim() !== '') draft.cache_ttl = Number(f.cache_ttl.value);
      draft.fail_closed = f.fail_closed.checked;
    }
    // Throws a YamlError (with LINE:COL in the text) when it cannot be read.
    const when = readWhen(f.when.value);
    if (when !== null || !state.editing || Object.keys(state.editing.kept).length === 0) draft.when = when;
    return draft;
  }

  // The draft, or null after showing why there is none.
  function readDraft() {
    let draft;
    try {
      draft = draftFromForm();
    } catch (e) {
      if (!(e instanceof YamlError)) throw e;
      setValidation('error', e.message);
      markWhenError(e.line, e.col);
      hidePreview();
      return null;
    }
    const keptMatch = state.editing && Object.keys(state.editing.kept).some((k) => k !== 'override');
    if (!keptMatch && (draft.when === null || draft.when === undefined || (isObj(draft.when) && Object.keys(draft.when).length === 0))) {
      setValidation('error', 'The rule needs a matcher: write what it matches, e.g. `type: shell.exec`.');
      hidePreview();
      return null;
    }
    return draft;
  }

  // Puts the caret where a problem is, without stealing focus while typing.
  function markWhenError(line, col) {
    const t = editor().elements.when;
    if (document.activeElement === t) return;
    const lines = t.value.split('\n');
    let pos = 0;
    for (let i = 0; i < Math.min(line - 1, lines.length); i++) pos += lines[i].length + 1;
    pos += Math.max(0, col - 1);
    t.setSelectionRange(pos, pos);
  }

  function hidePreview() {
    byTestId('rule-preview').hidden = true;
    byTestId('rule-preview-count').textContent = '';
    byTestId('rule-preview-samples').replaceChildren();
  }

  function setValidation(kind, text) {
    const v = byTestId('rule-validation');
    v.dataset.state = kind;
    v.textContent = text;
    if (kind !== 'ok') showWarnings(byTestId('rule-warnings'), []);
  }

  // The linter's warnings (`warnings` of a preview or a save): the rule is
  // valid and saves, but never does what it says (hidden by another rule,
  // a field no action has). Each says which rule and what would fix it.
  function showWarnings(list, warnings) {
    const ws = Array.isArray(warnings) ? warnings.filter(isObj) : [];
    list.replaceChildren(
      ...ws.map((w) =>
        el(
          'li',
          { 'data-testid': 'rule-warning', 'data-code': w.code || '' },
          el('strong', { text: 'Warning: ' }),
          String(w.message || ''),
          w.code ? el('code', { class: 'warning-code', text: `[${w.code}]` }) : null,
        ),
      ),
    );
    list.hidden = ws.length === 0;
    return ws.length;
  }

  function showSavedWarnings(id, warnings) {
    const box = byTestId('rules-saved-warnings');
    const n = showWarnings(byTestId('rules-saved-warnings-list'), warnings);
    byTestId('rules-saved-warnings-title').textContent = n
      ? `Saved rule ${id}, with ${n === 1 ? 'a warning' : `${n} warnings`}:`
      : '';
    box.hidden = n === 0;
  }

  async function validateAndPreview() {
    const seq = ++state.validateSeq;
    const draft = readDraft();
    if (!draft) return;
    setValidation('checking', 'Checking…');
    try {
      const data = await api('POST', '/api/rules/preview', { draft, lookbackLimit: PREVIEW_LOOKBACK });
      if (seq !== state.validateSeq) return;
      setValidation('ok', 'The rule is valid.');
      showWarnings(byTestId('rule-warnings'), isObj(data) ? data.warnings : []);
      renderPreview(data);
    } catch (e) {
      if (seq !== state.validateSeq || e.status === 401) return;
      setValidation('error', e.message);
      hidePreview();
    }
  }
  const validateSoon = debounce(validateAndPreview, 400);

  function renderPreview(data) {
    const box = byTestId('rule-preview');
    const matched = Number(first(isObj(data) ? data.matched : undefined, isObj(data) ? data.matches : undefined, 0));
    const of = Number(first(isObj(data) ? data.of : undefined, isObj(data) ? data.total : undefined, isObj(data) ? data.considered : undefined, isObj(data) ? data.lookback : undefined, PREVIEW_LOOKBACK));
    const countNode = byTestId('rule-preview-count');
    countNode.dataset.matched = String(matched);
    countNode.textContent = `Would have matched ${matched} of the last ${of} action${of === 1 ? '' : 's'}.`;
    const samples = listOf(data, 'samples', 'sample', 'examples').slice(0, PREVIEW_SAMPLES);
    byTestId('rule-preview-samples').replaceChildren(
      ...samples.map((s) => {
        const rec = normRecord(isObj(s.record) ? { ...s.record, time: first(s.timestamp, s.time, s.record.timestamp) } : s);
        return el(
          'li',
          { 'data-testid': 'rule-preview-sample' },
          el('span', { class: 'muted small', text: fmtTime(rec.time) }),
          rec.decision ? decisionBadge(rec.decision) : null,
          el('code', { text: rec.summary || rec.type }),
        );
      }),
    );
    box.hidden = false;
  }

  async function saveRule(ev) {
    ev.preventDefault();
    validateSoon.cancel();
    state.validateSeq++;
    const errNode = byTestId('rule-save-error');
    showMessage(errNode, '');
    const draft = readDraft();
    if (!draft) {
      showMessage(errNode, 'Not saved: fix the rule above.');
      return;
    }
    const save = byTestId('rule-save');
    save.disabled = true;
    try {
      const data = await api('POST', '/api/rules', draft);
      const id = String(first(isObj(data) ? data.id : undefined, isObj(data) && isObj(data.rule) ? data.rule.id : undefined, draft.id, ''));
      closeEditor();
      toast(`Saved rule ${id}`, 'allow');
      showSavedWarnings(id, isObj(data) ? data.warnings : []);
      await loadRules();
      renderRules(id);
    } catch (e) {
      if (e.status === 401) return;
      setValidation('error', e.message);
      showMessage(errNode, 'Not saved: fix the rule above.');
    } finally {
      save.disabled = false;
    }
  }

  async function deleteRule(r) {
    if (!window.confirm(`Delete rule ${r.id}? This cannot be undone.`)) return;
    try {
      await api('DELETE', `/api/rules/${encodeURIComponent(r.id)}`);
      toast(`Deleted rule ${r.id}`, 'deny');
      if (state.editing && state.editing.id === r.id) closeEditor();
      loadRules();
    } catch (e) {
      if (e.status !== 401) showMessage(byTestId('rules-error'), `Could not delete ${r.id}: ${e.message}`);
    }
  }

  // ------------------------------------------------------- banner, toasts

  function banner(text) {
    showMessage(byTestId('banner'), text);
  }

  function toast(text, kind) {
    let box = document.querySelector('.toasts');
    if (!box) {
      box = el('div', { class: 'toasts', role: 'status', 'aria-live': 'polite' });
      document.body.append(box);
    }
    const t = el('div', { class: `toast toast-${kind || 'other'}`, text, 'data-testid': 'toast' });
    box.append(t);
    setTimeout(() => t.remove(), 4000);
  }

  // ------------------------------------------------------------------ wire

  function resetPaging() {
    state.actions.cursors = [null];
    state.actions.page = 0;
  }

  function wire() {
    byTestId('login-form').addEventListener('submit', (ev) => {
      ev.preventDefault();
      // A pasted link works as well as the bare token.
      let token = byTestId('login-token').value.trim();
      const m = /[#&?/]token=([^&\s]+)/.exec(token);
      if (m) {
        try {
          token = decodeURIComponent(m[1]);
        } catch {
          token = m[1];
        }
      }
      if (token) signIn(token);
    });
    byTestId('logout').addEventListener('click', () => signOut('Signed out.'));
    window.addEventListener('hashchange', () => {
      const t = tokenFromFragment();
      if (t) signIn(t);
      else route();
    });

    const filters = byTestId('actions-filters');
    filters.addEventListener('submit', (ev) => {
      ev.preventDefault();
      state.actions.filters = readFilters();
      resetPaging();
      loadActions();
    });
    filters.addEventListener('reset', () => {
      setTimeout(() => {
        state.actions.filters = {};
        resetPaging();
        loadActions();
      });
    });
    byTestId('page-prev').addEventListener('click', () => {
      const s = state.actions;
      if (s.page === 0) return;
      s.page--;
      s.cursors.length = s.page + 1;
      loadActions();
    });
    byTestId('page-next').addEventListener('click', () => {
      const s = state.actions;
      if (s.next === null || s.next === undefined) return;
      s.cursors[s.page + 1] = s.next;
      s.page++;
      loadActions();
    });

    byTestId('rule-new').addEventListener('click', () => openEditor(null));
    byTestId('rule-cancel').addEventListener('click', closeEditor);
    byTestId('rule-preview-button').addEventListener('click', () => {
      validateSoon.cancel();
      validateAndPreview();
    });
    const form = editor();
    form.addEventListener('submit', saveRule);
    form.addEventListener('input', () => validateSoon());
    form.elements.decision.addEventListener('change', syncDecisionFields);
  }

  function boot() {
    wire();
    let token = tokenFromFragment();
    if (!token) {
      try {
        token = sessionStorage.getItem(TOKEN_KEY);
      } catch {
        token = null;
      }
    }
    if (token) signIn(token);
    else signOut('');
  }

  if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', boot);
  else boot();
})();
