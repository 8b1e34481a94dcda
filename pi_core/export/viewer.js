(function () {
  'use strict';
  // Everything on the page was rendered and escaped when it was exported; this script only lays out the
  // tree, shows the selected branch and toggles collapsed parts. It never turns session text into markup.

  const container = document.getElementById('tree-container');
  const treeStatus = document.getElementById('tree-status');
  const searchInput = document.getElementById('tree-search');
  const nodes = new Map();
  Array.from(container.querySelectorAll('.tree-node')).forEach(function (el, index) {
    const ts = Date.parse(el.dataset.ts);
    nodes.set(el.dataset.id, { id: el.dataset.id, el: el, parentId: el.dataset.parent || null, ts: isNaN(ts) ? 0 : ts, index: index, children: [], parent: null });
  });
  const roots = [];
  nodes.forEach(function (node) {
    const parent = node.parentId !== null && node.parentId !== node.id ? nodes.get(node.parentId) : undefined;
    if (parent) { node.parent = parent; parent.children.push(node); } else { roots.push(node); }
  });
  nodes.forEach(function (node) {
    node.children.sort(function (a, b) { return a.ts - b.ts || a.index - b.index; });
  });
  const articles = new Map();
  document.querySelectorAll('#messages > .entry').forEach(function (el) { articles.set(el.dataset.id, el); });

  const params = new URLSearchParams(window.location.search);
  const defaultLeaf = nodes.has(params.get('leafId')) ? params.get('leafId') : document.body.dataset.leaf;
  let currentLeaf = defaultLeaf;
  let currentTarget = nodes.has(params.get('targetId')) ? params.get('targetId') : defaultLeaf;
  let filterMode = 'default';
  let dfsOrder = null;

  function pathIds(id) {
    const ids = new Set();
    let node = nodes.get(id);
    while (node && !ids.has(node.id)) { ids.add(node.id); node = node.parent; }
    return ids;
  }

  function newestLeaf(id) {
    let node = nodes.get(id);
    const seen = new Set();
    while (node && node.children.length > 0 && !seen.has(node.id)) {
      seen.add(node.id);
      node = node.children[node.children.length - 1];
    }
    return node ? node.id : id;
  }

  // Depth-first order with the branch holding the current leaf first at every fork. Iterative: a long
  // session is a chain deeper than the call stack.
  function computeOrder(active) {
    const holdsActive = new Map();
    const post = [];
    const pending = roots.slice();
    const seen = new Set();
    while (pending.length) {
      const node = pending.pop();
      if (seen.has(node.id)) continue;
      seen.add(node.id);
      post.push(node);
      node.children.forEach(function (c) { pending.push(c); });
    }
    nodes.forEach(function (node) { if (!seen.has(node.id)) { post.push(node); roots.push(node); seen.add(node.id); } });
    for (let i = post.length - 1; i >= 0; i--) {
      const node = post[i];
      holdsActive.set(node, active.has(node.id) || node.children.some(function (c) { return holdsActive.get(c); }));
    }
    const activeFirst = function (list) {
      return list.slice().sort(function (a, b) { return Number(holdsActive.get(b)) - Number(holdsActive.get(a)); });
    };
    const order = [];
    const stack = activeFirst(roots).reverse();
    const placed = new Set();
    while (stack.length) {
      const node = stack.pop();
      if (placed.has(node.id)) continue;
      placed.add(node.id);
      order.push(node);
      activeFirst(node.children).reverse().forEach(function (c) { stack.push(c); });
    }
    return order;
  }

  // Rows of the visible tree: a hidden entry's children hang from its nearest visible ancestor. A fork
  // indents its branches one step and draws connectors; a single-child chain stays at one indent.
  function layout(visible) {
    const visibleSet = new Set(visible);
    const kids = new Map();
    kids.set(null, []);
    visible.forEach(function (node) {
      let up = node.parent;
      const guard = new Set();
      while (up && !visibleSet.has(up) && !guard.has(up.id)) { guard.add(up.id); up = up.parent; }
      const key = up && visibleSet.has(up) ? up.id : null;
      if (!kids.has(key)) kids.set(key, []);
      kids.get(key).push(node);
    });
    const top = kids.get(null);
    const manyRoots = top.length > 1;
    const rows = [];
    const stack = [];
    for (let i = top.length - 1; i >= 0; i--) {
      stack.push({ node: top[i], indent: manyRoots ? 1 : 0, branched: manyRoots, connector: manyRoots, last: i === top.length - 1, gutters: [], virtual: manyRoots });
    }
    while (stack.length) {
      const row = stack.pop();
      rows.push(row);
      const children = kids.get(row.node.id) || [];
      const many = children.length > 1;
      const childIndent = many || (row.branched && row.indent > 0) ? row.indent + 1 : row.indent;
      const shown = row.connector && !row.virtual;
      const display = manyRoots ? Math.max(0, row.indent - 1) : row.indent;
      const gutters = shown ? row.gutters.concat([{ at: Math.max(0, display - 1), line: !row.last }]) : row.gutters;
      for (let i = children.length - 1; i >= 0; i--) {
        stack.push({ node: children[i], indent: childIndent, branched: many, connector: many, last: i === children.length - 1, gutters: gutters, virtual: false });
      }
    }
    rows.forEach(function (row) {
      const display = manyRoots ? Math.max(0, row.indent - 1) : row.indent;
      const connector = row.connector && !row.virtual;
      let prefix = '';
      for (let level = 0; level < display; level++) {
        const gutter = row.gutters.find(function (g) { return g.at === level; });
        if (gutter) prefix += gutter.line ? '│  ' : '   ';
        else if (connector && level === display - 1) prefix += row.last ? '└─ ' : '├─ ';
        else prefix += '   ';
      }
      row.prefix = prefix;
    });
    return rows;
  }

  function passes(node, tokens) {
    if (node.id === currentLeaf) return true;
    const kind = node.el.dataset.filter;
    if (kind === 'toolonly') return false;
    let ok;
    switch (filterMode) {
      case 'user-only': ok = kind === 'user'; break;
      case 'no-tools': ok = kind !== 'settings' && kind !== 'tool'; break;
      case 'labeled-only': ok = node.el.dataset.labeled === '1'; break;
      case 'all': ok = true; break;
      default: ok = kind !== 'settings';
    }
    if (!ok) return false;
    const text = node.el.dataset.search || '';
    return tokens.every(function (t) { return text.indexOf(t) !== -1; });
  }

  function renderTree() {
    if (dfsOrder === null) dfsOrder = computeOrder(pathIds(currentLeaf));
    const tokens = searchInput.value.toLowerCase().split(/\s+/).filter(Boolean);
    const visible = dfsOrder.filter(function (node) { return passes(node, tokens); });
    const rows = layout(visible);
    const shown = new Set();
    const fragment = document.createDocumentFragment();
    rows.forEach(function (row) {
      row.node.el.querySelector('.tree-prefix').textContent = row.prefix;
      row.node.el.hidden = false;
      shown.add(row.node.id);
      fragment.appendChild(row.node.el);
    });
    nodes.forEach(function (node) { if (!shown.has(node.id)) { node.el.hidden = true; fragment.appendChild(node.el); } });
    container.appendChild(fragment);
    markPath();
    treeStatus.textContent = rows.length + ' / ' + nodes.size + ' entries';
  }

  function markPath() {
    const path = pathIds(currentLeaf);
    nodes.forEach(function (node) {
      const onPath = path.has(node.id);
      node.el.classList.toggle('in-path', onPath);
      node.el.classList.toggle('active', node.id === currentTarget);
      node.el.querySelector('.tree-marker').textContent = onPath ? '•' : ' ';
    });
  }

  function showBranch(leafId, targetId, scroll) {
    currentLeaf = leafId;
    currentTarget = targetId || leafId;
    const path = pathIds(leafId);
    articles.forEach(function (el, id) { el.hidden = !path.has(id); });
    markPath();
    const activeRow = nodes.get(currentTarget);
    if (activeRow && !activeRow.el.hidden) activeRow.el.scrollIntoView({ block: 'nearest' });
    if (scroll === 'bottom') {
      const content = document.getElementById('content');
      content.scrollTop = content.scrollHeight;
    } else if (scroll === 'target' && activeRow) {
      const target = document.getElementById(activeRow.el.dataset.anchor) || articles.get(currentTarget);
      if (target) {
        target.scrollIntoView({ block: 'center' });
        const article = target.closest('.entry') || target;
        article.classList.add('highlight');
        setTimeout(function () { article.classList.remove('highlight'); }, 2000);
      }
    }
  }

  container.addEventListener('click', function (event) {
    const row = event.target.closest('.tree-node');
    if (!row || window.getSelection().toString()) return;
    showBranch(newestLeaf(row.dataset.id), row.dataset.id, 'target');
    document.body.classList.remove('sidebar-open');
  });

  searchInput.addEventListener('input', renderTree);
  document.querySelectorAll('.filter-btn').forEach(function (button) {
    button.addEventListener('click', function () {
      document.querySelectorAll('.filter-btn').forEach(function (b) { b.classList.toggle('active', b === button); });
      filterMode = button.dataset.filter;
      renderTree();
    });
  });

  function setPressed(action, value) {
    const button = document.querySelector('[data-action="' + action + '"]');
    if (button) button.setAttribute('aria-pressed', String(value));
  }
  let thinkingOpen = true;
  let toolsOpen = false;
  let hiddenShown = false;
  function toggleThinking() {
    thinkingOpen = !thinkingOpen;
    document.querySelectorAll('details.thinking').forEach(function (d) { d.open = thinkingOpen; });
    setPressed('thinking', thinkingOpen);
  }
  function toggleTools() {
    toolsOpen = !toolsOpen;
    document.querySelectorAll('details.tool-output, details.compaction-block, details.skill-invocation').forEach(function (d) { d.open = toolsOpen; });
    setPressed('tools', toolsOpen);
  }
  function toggleHidden() {
    hiddenShown = !hiddenShown;
    document.body.classList.toggle('show-hidden', hiddenShown);
    setPressed('hidden', hiddenShown);
  }
  const actions = { thinking: toggleThinking, tools: toggleTools, hidden: toggleHidden };
  document.querySelectorAll('[data-action]').forEach(function (button) {
    button.addEventListener('click', function () { actions[button.dataset.action](); });
  });
  document.getElementById('sidebar-toggle').addEventListener('click', function () {
    document.body.classList.toggle('sidebar-open');
  });
  document.getElementById('messages').addEventListener('click', function (event) {
    if (event.target.tagName === 'IMG') event.target.classList.toggle('zoomed');
  });

  document.addEventListener('keydown', function (event) {
    if (event.key === 'Escape') {
      searchInput.value = '';
      renderTree();
      showBranch(defaultLeaf, defaultLeaf, 'bottom');
      return;
    }
    const el = document.activeElement;
    if (event.ctrlKey || event.metaKey || event.altKey || (el && (el.tagName === 'INPUT' || el.isContentEditable))) return;
    const key = event.key.toLowerCase();
    if (key === 't') toggleThinking();
    else if (key === 'o') toggleTools();
    else if (key === 'h') toggleHidden();
    else return;
    event.preventDefault();
  });

  // Times in the reader's own time zone and format.
  document.querySelectorAll('time[datetime]').forEach(function (el) {
    const moment = new Date(el.getAttribute('datetime'));
    if (isNaN(moment.getTime())) return;
    el.textContent = el.classList.contains('date')
      ? moment.toLocaleString()
      : moment.toLocaleTimeString(undefined, { hour: '2-digit', minute: '2-digit', second: '2-digit' });
  });

  renderTree();
  showBranch(currentLeaf, currentTarget, params.has('targetId') ? 'target' : 'none');
})();
