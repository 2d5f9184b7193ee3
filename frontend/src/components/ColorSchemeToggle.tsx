import { ActionIcon, useComputedColorScheme, useMantineColorScheme } from '@mantine/core';
import { useColorScheme } from '@mantine/hooks';
import { nextColorScheme } from '../theme';

const icon = { width: 18, height: 18, viewBox: '0 0 24 24', fill: 'none', stroke: 'currentColor', strokeWidth: 2, strokeLinecap: 'round', strokeLinejoin: 'round', 'aria-hidden': true } as const;

/**
 * ColorSchemeToggle is the header's light/dark switch. The console follows the system's scheme until it is
 * pressed; it then shows the other scheme, kept in localStorage, and follows the system again once the scheme
 * chosen is the system's (nothing is stored then).
 */
export function ColorSchemeToggle() {
  const { setColorScheme, clearColorScheme } = useMantineColorScheme();
  const system = useColorScheme('light', { getInitialValueInEffect: false });
  const shown = useComputedColorScheme('light', { getInitialValueInEffect: false });
  const label = shown === 'dark' ? 'Switch to light mode' : 'Switch to dark mode';
  return (
    <ActionIcon
      variant="default"
      size="lg"
      aria-label={label}
      title={label}
      data-testid="color-scheme-toggle"
      onClick={() => {
        const next = nextColorScheme(shown, system);
        if (next === 'auto') clearColorScheme();
        else setColorScheme(next);
      }}
    >
      {shown === 'dark' ? (
        // A sun: what pressing it brings.
        <svg {...icon}>
          <circle cx="12" cy="12" r="4" />
          <path d="M12 2v2M12 20v2M4.9 4.9l1.4 1.4M17.7 17.7l1.4 1.4M2 12h2M20 12h2M4.9 19.1l1.4-1.4M17.7 6.3l1.4-1.4" />
        </svg>
      ) : (
        // A crescent moon.
        <svg {...icon}>
          <path d="M20 14.5A8 8 0 0 1 9.5 4a8 8 0 1 0 10.5 10.5Z" />
        </svg>
      )}
    </ActionIcon>
  );
}
