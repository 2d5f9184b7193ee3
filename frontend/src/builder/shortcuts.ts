/** The builder's keyboard shortcuts of the whole page. Pure: the page passes the key event's fields. */

export interface KeyPress {
  key: string;
  ctrlKey: boolean;
  metaKey: boolean;
  shiftKey: boolean;
  altKey: boolean;
}

/** historyShortcut reads Ctrl/Cmd+Z as undo, Ctrl/Cmd+Shift+Z and Ctrl+Y as redo. */
export function historyShortcut(e: KeyPress): 'undo' | 'redo' | undefined {
  if (!(e.ctrlKey || e.metaKey) || e.altKey) return undefined;
  const k = e.key.toLowerCase();
  if (k === 'z') return e.shiftKey ? 'redo' : 'undo';
  if (k === 'y' && e.ctrlKey && !e.shiftKey) return 'redo';
  return undefined;
}

// Inputs whose value is not text typed in: a shortcut there is the page's.
const NOT_TEXT = new Set(['checkbox', 'radio', 'button', 'submit', 'reset', 'range', 'color', 'file']);

/** Target is the part of a DOM element editsText reads: HTMLElement gives it, tests give a stand-in. */
export interface Target {
  tagName?: string;
  type?: string;
  isContentEditable?: boolean;
}

/**
 * editsText tells whether the key press is for a text field (an input, a textarea, a contenteditable), which
 * undoes its own text: the page's undo must leave it alone.
 */
export function editsText(t: Target | null | undefined): boolean {
  if (!t) return false;
  if (t.isContentEditable) return true;
  const tag = (t.tagName ?? '').toUpperCase();
  if (tag === 'TEXTAREA') return true;
  return tag === 'INPUT' && !NOT_TEXT.has((t.type ?? 'text').toLowerCase());
}
