import { notifications } from '@mantine/notifications';

/**
 * toast tells in a few words that an action succeeded when the page would otherwise change silently ("Bus orders
 * created", "Connector paused"). It is polite (role status) and goes by itself after a few seconds. Failures are not
 * toasts: they stay in the dialog or on the page, next to what failed, until the user acts.
 */
export function toast(message: string) {
  notifications.show({
    message,
    color: 'green',
    role: 'status',
    withBorder: true,
    autoClose: 4000,
    closeButtonProps: { 'aria-label': 'Dismiss the notification' },
  });
}

/** notify shows message as a toast when there is one (helpers that answer undefined for "nothing to tell"). */
export function notify(message: string | undefined) {
  if (message) toast(message);
}

/** sentence gives a text a capital first letter ("bus" → "Bus"), leaving the rest ("API destination") as it is. */
export const sentence = (s: string) => s.charAt(0).toUpperCase() + s.slice(1);
