// A side panel of the Collections screen: a modal dialog along the right
// edge (the whole width on a phone) with a heading and Close. Escape or
// Close closes it; the focus moves into it on opening and back to what
// had it on closing.

import { h } from './dom.js';

let seq = 0;

// drawer opens a panel titled title holding body inside host (an element
// of the page, so that leaving the screen removes it); onClose follows
// its closing, and the focus goes back to opener (what has it now if
// not given). It returns {close, node, title}.
export function drawer(host, title, body, onClose, opener = document.activeElement) {
  const id = `drawer-title-${++seq}`;
  const heading = h('h2', { id, tabindex: '-1' }, title);
  const close = h('button', { type: 'button', class: 'plain drawer-close' }, 'Close');
  const dlg = h('dialog', { class: 'drawer', 'aria-labelledby': id },
    h('div', { class: 'drawer-head' }, heading, close), h('div', { class: 'drawer-body' }, body));
  close.addEventListener('click', () => dlg.close());
  dlg.addEventListener('close', () => {
    dlg.remove();
    if (onClose) onClose();
    if (opener && opener.isConnected && typeof opener.focus === 'function') opener.focus();
  });
  host.append(dlg);
  dlg.showModal();
  heading.focus();
  return { close: () => dlg.open && dlg.close(), node: dlg, title: heading };
}
