import { darken, DEFAULT_THEME, isLightColor, mergeMantineTheme } from '@mantine/core';
import { describe, expect, it } from 'vitest';
import { AA, backgroundOf, contrast, cssVariablesResolver, LUMINANCE_THRESHOLD, nextColorScheme, PRIMARY_SHADE, readable, schemeColors, theme } from './theme';

const t = mergeMantineTheme(DEFAULT_THEME, theme);
const colorNames = Object.keys(t.colors);
// What the page itself is: white in light mode, dark 7 in dark mode (Mantine's --mantine-color-body).
const body = { light: t.white, dark: t.colors.dark[7] };

describe('contrast', () => {
  it.each([
    ['black on white', '#000000', '#ffffff', 21],
    ['a colour on itself', '#1971c2', '#1971c2', 1],
    ['Mantine blue 6 on white', '#228be6', '#ffffff', 3.56],
    ['Mantine blue 8 on white', '#1971c2', '#fff', 5.02],
  ])('%s', (_, a, b, want) => {
    expect(contrast(a, b)).toBeCloseTo(want, 2);
    expect(contrast(b, a)).toBeCloseTo(want, 2);
  });
});

describe('readable', () => {
  it('keeps a colour that already reaches the ratio', () => {
    expect(readable('#1971c2', '#ffffff')).toBe('#1971c2');
  });
  it('darkens a colour on a light background until it reaches 4.5:1', () => {
    const c = readable('#868e96', '#ffffff');
    expect(contrast(c, '#ffffff')).toBeGreaterThanOrEqual(AA);
    expect(contrast(c, '#ffffff')).toBeLessThan(5);
    expect(contrast(c, '#000000')).toBeLessThan(contrast('#868e96', '#000000'));
  });
  it('lightens a colour on a dark background', () => {
    const c = readable('#828282', '#3b3b3b');
    expect(contrast(c, '#3b3b3b')).toBeGreaterThanOrEqual(AA);
    expect(contrast(c, '#ffffff')).toBeLessThan(contrast('#828282', '#ffffff'));
  });
  it('reads rgb() as Mantine writes it', () => {
    expect(contrast('rgba(25, 113, 194, 1)', '#ffffff')).toBeCloseTo(5.02, 2);
  });
  it('asks for another ratio', () => {
    expect(contrast(readable('#228be6', '#ffffff', 7), '#ffffff')).toBeGreaterThanOrEqual(7);
  });
});

describe.each(['light', 'dark'] as const)('the %s scheme', (scheme) => {
  const vars = schemeColors(t, scheme);
  const backgrounds = [body[scheme], backgroundOf(t, scheme)];

  it('is what the resolver gives MantineProvider', () => {
    expect(cssVariablesResolver(t)[scheme]).toEqual(vars);
  });

  it.each(['anchor', 'dimmed', 'error', 'success'])('--mantine-color-%s is readable on the page', (name) => {
    const v = vars[`--mantine-color-${name}`];
    for (const bg of backgrounds) expect(contrast(v, bg), `${v} on ${bg}`).toBeGreaterThanOrEqual(AA);
  });

  it.each(colorNames)('%s text and outlines are readable on the page', (name) => {
    for (const kind of ['text', 'outline']) {
      const v = vars[`--mantine-color-${name}-${kind}`];
      for (const bg of backgrounds) expect(contrast(v, bg), `${kind} ${v} on ${bg}`).toBeGreaterThanOrEqual(AA);
    }
  });

  // Light buttons, badges, alerts and the active navigation link: their text on their background, and hovered.
  it.each(colorNames)('%s light variants are readable, hovered too', (name) => {
    const c = t.colors[name];
    const [fg, bgs] = scheme === 'light' ? [vars[`--mantine-color-${name}-light-color`], [c[1], c[2]]] : [c[0], [darken(c[9], 0.5), darken(c[9], 0.3)]];
    for (const bg of bgs) expect(contrast(fg, bg), `${fg} on ${bg}`).toBeGreaterThanOrEqual(AA);
  });
});

describe('filled buttons and badges', () => {
  // autoContrast: Mantine writes black on a colour isLightColor calls light, else white.
  it.each(colorNames)('%s has readable text in both schemes', (name) => {
    for (const shade of [PRIMARY_SHADE.light, PRIMARY_SHADE.dark]) {
      const bg = t.colors[name][shade];
      const fg = isLightColor(bg, LUMINANCE_THRESHOLD) ? t.black : t.white;
      expect(contrast(fg, bg), `${fg} on ${name} ${shade}`).toBeGreaterThanOrEqual(AA);
    }
  });
  it('keep white text on the primary colour and on red', () => {
    for (const name of ['blue', 'red']) expect(isLightColor(t.colors[name][PRIMARY_SHADE.light], t.luminanceThreshold)).toBe(false);
  });
});

describe('nextColorScheme', () => {
  it.each([
    ['light on a light system: dark, stored', 'light', 'light', 'dark'],
    ['dark on a light system: back to following the system', 'dark', 'light', 'auto'],
    ['dark on a dark system: light, stored', 'dark', 'dark', 'light'],
    ['light on a dark system: back to following the system', 'light', 'dark', 'auto'],
  ] as const)('%s', (_, shown, system, want) => {
    expect(nextColorScheme(shown, system)).toBe(want);
  });
});
