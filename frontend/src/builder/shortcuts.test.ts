import { describe, expect, it } from 'vitest';
import { editsText, historyShortcut, type KeyPress } from './shortcuts';

const press = (key: string, mods: Partial<KeyPress> = {}): KeyPress => ({ key, ctrlKey: false, metaKey: false, shiftKey: false, altKey: false, ...mods });

describe('historyShortcut', () => {
  it.each([
    ['Ctrl+Z', press('z', { ctrlKey: true }), 'undo'],
    ['Cmd+Z', press('z', { metaKey: true }), 'undo'],
    ['Ctrl+Shift+Z', press('Z', { ctrlKey: true, shiftKey: true }), 'redo'],
    ['Cmd+Shift+Z', press('Z', { metaKey: true, shiftKey: true }), 'redo'],
    ['Ctrl+Y', press('y', { ctrlKey: true }), 'redo'],
    ['Z alone', press('z'), undefined],
    ['Ctrl+Alt+Z', press('z', { ctrlKey: true, altKey: true }), undefined],
    ['Cmd+Y', press('y', { metaKey: true }), undefined],
    ['Ctrl+C', press('c', { ctrlKey: true }), undefined],
  ])('reads %s', (_, e, want) => {
    expect(historyShortcut(e)).toBe(want);
  });
});

describe('editsText', () => {
  it.each([
    ['a text input', { tagName: 'INPUT', type: 'text' }, true],
    ['an input of no type', { tagName: 'input' }, true],
    ['a number input', { tagName: 'INPUT', type: 'number' }, true],
    ['a textarea', { tagName: 'TEXTAREA' }, true],
    ['a contenteditable', { tagName: 'DIV', isContentEditable: true }, true],
    ['a switch', { tagName: 'INPUT', type: 'checkbox' }, false],
    ['a button', { tagName: 'BUTTON' }, false],
    ['the canvas', { tagName: 'DIV', isContentEditable: false }, false],
    ['nothing', null, false],
  ])('%s: %s', (_, t, want) => {
    expect(editsText(t)).toBe(want);
  });
});
