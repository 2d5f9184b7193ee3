import { Anchor, createTheme, isVirtualColor, Modal, TableScrollContainer, type CSSVariablesResolver, type MantineColorScheme, type MantineColorsTuple, type MantineTheme } from '@mantine/core';

// The console's Mantine theme (issue 28): every text meets WCAG AA, 4.5:1 against what it is drawn on, in light
// and in dark mode, which axe-core checks on every page in the end-to-end test. Mantine's defaults do not: its
// blue 6 (filled buttons, links, outline badges) is 3.6:1 on white, its dimmed grey 3.3:1, and a coloured text
// uses the same shade 6 (c="orange": 2.6:1). The fixes are made once here, not page by page.

/** AA is the contrast WCAG 2 level AA asks of normal text, and axe-core's color-contrast rule checks. */
export const AA = 4.5;

type RGB = [number, number, number];

function rgbOf(color: string): RGB {
  // rgb() and rgba() (what Mantine's darken and lighten answer); the alpha is left out.
  const fn = color.match(/^rgba?\(([^)]*)\)$/);
  if (fn) return fn[1].split(',').slice(0, 3).map((v) => Number(v.trim())) as RGB;
  const h = color.replace('#', '');
  const full = h.length === 3 ? [...h].map((c) => c + c).join('') : h;
  const n = parseInt(full, 16);
  return [(n >> 16) & 255, (n >> 8) & 255, n & 255];
}

const hexOf = (c: RGB) => '#' + c.map((v) => Math.round(v).toString(16).padStart(2, '0')).join('');

/** luminance is the WCAG relative luminance of a #rrggbb, #rgb or rgb() colour, 0 for black to 1 for white. */
export function luminance(color: string): number {
  const [r, g, b] = rgbOf(color).map((v) => {
    const s = v / 255;
    return s <= 0.04045 ? s / 12.92 : ((s + 0.055) / 1.055) ** 2.4;
  });
  return 0.2126 * r + 0.7152 * g + 0.0722 * b;
}

/** contrast is the WCAG contrast ratio of two colours, from 1 (the same) to 21 (black on white). */
export function contrast(a: string, b: string): number {
  const [hi, lo] = [luminance(a), luminance(b)].sort((x, y) => y - x);
  return (hi + 0.05) / (lo + 0.05);
}

/**
 * readable is fg, mixed with black on a light background or with white on a dark one in small steps, until it
 * reaches ratio against bg; fg itself when it already does. It keeps the colour's hue, only darker or lighter.
 */
export function readable(fg: string, bg: string, ratio = AA): string {
  const from = rgbOf(fg);
  const towards: RGB = luminance(bg) > 0.18 ? [0, 0, 0] : [255, 255, 255];
  for (let t = 0; t <= 1; t += 0.02) {
    const c = hexOf(from.map((v, i) => v + (towards[i] - v) * t) as RGB);
    if (contrast(c, bg) >= ratio) return c;
  }
  return hexOf(towards);
}

/**
 * backgroundOf is the darkest background text is drawn on in light mode, gray 1 (hovered and striped table rows
 * are gray 0 and 1, code gray 0), and the lightest in dark mode, dark 5 (a hovered default button; the page is
 * dark 7, inputs and code dark 6). A colour readable on it is readable on the others too.
 */
export const backgroundOf = (t: MantineTheme, scheme: 'light' | 'dark') => (scheme === 'light' ? t.colors.gray[1] : t.colors.dark[5]);

/**
 * The shade of the primary colour in filled buttons and badges, links and outlines in light mode: blue 8 gives
 * white text 5:1 (the default, 6, gives 3.6:1). Dark mode keeps Mantine's 8.
 */
export const PRIMARY_SHADE = { light: 8, dark: 8 } as const;

/**
 * LUMINANCE_THRESHOLD picks a filled colour's text (autoContrast): white on colours darker than this, black on
 * lighter ones. White reaches 4.5:1 up to 0.1833 (red 8 is 0.1827: 4.51:1), black from 0.175: cyan, teal, green,
 * orange, lime and yellow 8 get black text, on which white would be 2.5 to 4.4:1.
 */
export const LUMINANCE_THRESHOLD = 0.183;

export const theme = createTheme({
  primaryColor: 'blue',
  primaryShade: PRIMARY_SHADE,
  autoContrast: true,
  luminanceThreshold: LUMINANCE_THRESHOLD,
  components: {
    // Links are underlined: in dark mode no link colour stands out from the text around it by 3:1 while being
    // 4.5:1 on the page, so colour alone cannot tell a link in a sentence (axe-core's link-in-text-block).
    Anchor: Anchor.extend({ defaultProps: { underline: 'always' } }),
    // A table wider than the screen scrolls in its box: the box takes the keyboard focus (so the arrow keys scroll
    // it) and is a named region, the reference of what is positioned in it (a header's VisuallyHidden text would
    // otherwise widen the page). Pages name it after their table with aria-label.
    TableScrollContainer: TableScrollContainer.extend({
      defaultProps: { tabIndex: 0, role: 'region', 'aria-label': 'Table', pos: 'relative' },
    }),
    // A dialog's close button is an icon: it is named for those who cannot see it (axe-core's button-name).
    Modal: Modal.extend({ defaultProps: { closeButtonProps: { 'aria-label': 'Close' } } }),
  },
});

/** schemeColors are the colour variables of one scheme made readable on its darkest background. */
export function schemeColors(t: MantineTheme, scheme: 'light' | 'dark'): Record<string, string> {
  const { colors } = t;
  const bg = backgroundOf(t, scheme);
  const vars: Record<string, string> = {};
  for (const [name, tuple] of Object.entries(colors)) {
    if (isVirtualColor(tuple)) continue;
    const shades = tuple as MantineColorsTuple;
    // c="red", a Text's colour, and the text and border of outline buttons and badges.
    const text = readable(scheme === 'light' ? shades[PRIMARY_SHADE.light] : shades[4], bg);
    vars[`--mantine-color-${name}-text`] = text;
    vars[`--mantine-color-${name}-outline`] = text;
    // The text of light buttons, badges, alerts and the active navigation link, on their shade 1 background
    // (shade 2 when hovered). Dark mode's (shade 0 on shade 9 darkened) is readable as it is.
    if (scheme === 'light') vars[`--mantine-color-${name}-light-color`] = readable(shades[9], shades[2]);
  }
  return {
    ...vars,
    '--mantine-color-anchor': vars[`--mantine-color-${t.primaryColor}-text`],
    '--mantine-color-dimmed': readable(scheme === 'light' ? colors.gray[6] : colors.dark[2], bg),
    '--mantine-color-error': vars['--mantine-color-red-text'],
    '--mantine-color-success': vars['--mantine-color-teal-text'],
  };
}

/** cssVariablesResolver adds the readable colours of both schemes to Mantine's variables (MantineProvider). */
export const cssVariablesResolver: CSSVariablesResolver = (t) => ({
  variables: {},
  light: schemeColors(t, 'light'),
  dark: schemeColors(t, 'dark'),
});

/**
 * nextColorScheme is what the header's toggle sets when pressed while `shown` is on screen and the system prefers
 * `system`: the other scheme, or "auto" (follow the system, nothing stored) when the other scheme is the system's.
 */
export function nextColorScheme(shown: 'light' | 'dark', system: 'light' | 'dark'): MantineColorScheme {
  const other = shown === 'dark' ? 'light' : 'dark';
  return other === system ? 'auto' : other;
}
