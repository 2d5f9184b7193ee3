import { AppShell, Burger, Center, Group, Loader, NavLink, Text } from '@mantine/core';
import { useDisclosure, useMediaQuery } from '@mantine/hooks';
import {
  IconActivity,
  IconCloudLock,
  IconHistory,
  IconKey,
  IconLayoutDashboard,
  IconMailX,
  IconPlugConnected,
  IconRepeat,
  IconSchema,
  IconSend,
  IconTopologyBus,
  IconUsers,
  IconWebhook,
  type Icon,
} from '@tabler/icons-react';
import { lazy, Suspense, useEffect, useSyncExternalStore } from 'react';
import { Link, Navigate, Route, Routes, useLocation } from 'react-router-dom';
import { session, subscribe, type Session } from './api/session';
import { checkSession } from './api/userSessions';
import { ColorSchemeToggle } from './components/ColorSchemeToggle';
import { Identity } from './components/Identity';
import { SignIn } from './components/SignIn';
import { BusesPage } from './pages/BusesPage';
import { NotFoundPage } from './pages/NotFoundPage';

// The builder (React Flow) is loaded when first opened: the other pages do not need it.
const BuilderPage = lazy(() => import('./builder/BuilderPage').then((m) => ({ default: m.BuilderPage })));
// So are the pages a first visit does not open (the first is the buses'), which keeps the bundle a first visit
// loads within its budget (scripts/bundle-budget.mjs).
const DashboardPage = lazy(() => import('./pages/DashboardPage').then((m) => ({ default: m.DashboardPage })));
const EventsPage = lazy(() => import('./pages/EventsPage').then((m) => ({ default: m.EventsPage })));
const EventTracePage = lazy(() => import('./pages/EventTracePage').then((m) => ({ default: m.EventTracePage })));
const TailPage = lazy(() => import('./pages/TailPage').then((m) => ({ default: m.TailPage })));
const BusLogPage = lazy(() => import('./pages/BusLogPage').then((m) => ({ default: m.BusLogPage })));
const ArchivesPage = lazy(() => import('./pages/ArchivesPage').then((m) => ({ default: m.ArchivesPage })));
const ReplaysPage = lazy(() => import('./pages/ReplaysPage').then((m) => ({ default: m.ReplaysPage })));
const ReplayPage = lazy(() => import('./pages/ReplayPage').then((m) => ({ default: m.ReplayPage })));
const BusPage = lazy(() => import('./pages/BusPage').then((m) => ({ default: m.BusPage })));
const RulePage = lazy(() => import('./pages/RulePage').then((m) => ({ default: m.RulePage })));
const TargetPage = lazy(() => import('./pages/TargetPage').then((m) => ({ default: m.TargetPage })));
const ApiDestinationPage = lazy(() => import('./pages/ApiDestinationPage').then((m) => ({ default: m.ApiDestinationPage })));
const ApiDestinationsPage = lazy(() => import('./pages/ApiDestinationsPage').then((m) => ({ default: m.ApiDestinationsPage })));
const ConnectionPage = lazy(() => import('./pages/ConnectionPage').then((m) => ({ default: m.ConnectionPage })));
const ConnectionsPage = lazy(() => import('./pages/ConnectionsPage').then((m) => ({ default: m.ConnectionsPage })));
const DeadLetterPage = lazy(() => import('./pages/DeadLetterPage').then((m) => ({ default: m.DeadLetterPage })));
const DeadLettersPage = lazy(() => import('./pages/DeadLettersPage').then((m) => ({ default: m.DeadLettersPage })));
const RuntimePage = lazy(() => import('./pages/RuntimePage').then((m) => ({ default: m.RuntimePage })));
const SecurityPage = lazy(() => import('./pages/SecurityPage').then((m) => ({ default: m.SecurityPage })));
const SendEventsPage = lazy(() => import('./pages/SendEventsPage').then((m) => ({ default: m.SendEventsPage })));
// So are the access pages, which only an account's administrators use.
const MembersPage = lazy(() => import('./pages/MembersPage').then((m) => ({ default: m.MembersPage })));
const ApiKeysPage = lazy(() => import('./pages/ApiKeysPage').then((m) => ({ default: m.ApiKeysPage })));
const AccessKeysPage = lazy(() => import('./pages/AccessKeysPage').then((m) => ({ default: m.AccessKeysPage })));
const AuditLogPage = lazy(() => import('./pages/AuditLogPage').then((m) => ({ default: m.AuditLogPage })));

// The width (em) from which the navigation shows beside the page: Mantine's md breakpoint.
const NAV_BREAKPOINT_EM = 62;

// Each link has an icon to find it by at a glance; the label says what it is, so the icon is hidden from readers.
const nav: NavItem[] = [
  { to: '/', label: 'Dashboard', icon: IconLayoutDashboard },
  { to: '/buses', label: 'Buses', icon: IconTopologyBus },
  { to: '/builder', label: 'Builder', icon: IconSchema },
  { to: '/send', label: 'Send events', icon: IconSend },
  { to: '/runtime', label: 'Runtime', icon: IconActivity },
  { to: '/dead-letters', label: 'Dead letters', icon: IconMailX },
  { to: '/replays', label: 'Replays', icon: IconRepeat },
  { to: '/connections', label: 'Connections', icon: IconPlugConnected },
  { to: '/api-destinations', label: 'API destinations', icon: IconWebhook },
];

// The section "Access": who may use the account, with which credentials, and what they did (access.manage).
const accessNav: NavItem[] = [
  { to: '/access/members', label: 'Members and roles', icon: IconUsers },
  { to: '/access/api-keys', label: 'API keys', icon: IconKey },
  { to: '/access/access-keys', label: 'AWS access keys', icon: IconCloudLock },
  { to: '/access/audit-log', label: 'Audit log', icon: IconHistory },
];

interface NavItem {
  to: string;
  label: string;
  icon: Icon;
}

const navIcon = (I: Icon) => <I size={18} stroke={1.6} aria-hidden />;

/**
 * App shows the sign-in screen while nobody is signed in (or the server refused the credential), else the console.
 * A page opened without an API key first asks whether the browser still has a session (the cookie outlives a
 * reload; the CSRF token kept in memory does not).
 */
export function App() {
  const s = useSyncExternalStore(subscribe, session);
  const { pathname } = useLocation();
  useEffect(() => {
    if (s.checking) void checkSession();
  }, [s.checking]);
  if (s.checking) {
    return (
      <Center mih="100vh">
        <Loader size="sm" aria-label="Checking whether you are signed in" />
      </Center>
    );
  }
  if (!s.credential) return <SignIn notice={s.notice} method={s.method} />;
  return <Shell session={s} pathname={pathname} />;
}

/**
 * Shell is the signed-in console: the header, the navigation and the page. Below the md breakpoint (phones and
 * tablets held upright) the navigation hides behind a burger in the header and closes when a page is chosen.
 */
function Shell({ session: s, pathname }: { session: Session; pathname: string }) {
  const [opened, { toggle, close }] = useDisclosure(false);
  const collapsible = useMediaQuery(`(max-width: ${NAV_BREAKPOINT_EM - 0.01}em)`, false, { getInitialValueInEffect: false });
  // Whatever leads to another page closes the navigation (a link in it, in a page, or the browser's back).
  useEffect(() => close(), [pathname, close]);
  return (
    <AppShell header={{ height: 52 }} navbar={{ width: 200, breakpoint: 'md', collapsed: { mobile: !opened } }} padding="md">
      <AppShell.Header>
        <Group h="100%" px="md" justify="space-between" wrap="nowrap" gap="xs">
          <Group gap="xs" wrap="nowrap">
            <Burger opened={opened} onClick={toggle} hiddenFrom="md" size="sm" aria-label={opened ? 'Close the navigation' : 'Open the navigation'} aria-expanded={opened} aria-controls="navigation" />
            <Text fw={700} size="lg" visibleFrom="sm">
              EventBridge console
            </Text>
          </Group>
          <Group gap="xs" wrap="nowrap">
            <Identity session={s} />
            <ColorSchemeToggle />
          </Group>
        </Group>
      </AppShell.Header>
      {/* Collapsed on a phone, the navigation is out of sight: inert keeps its links out of the tab order too. */}
      <AppShell.Navbar p="xs" id="navigation" component="nav" aria-label="Console" inert={collapsible && !opened}>
        {nav.map((n) => (
          <NavLink key={n.to} component={Link} to={n.to} label={n.label} leftSection={navIcon(n.icon)} active={pathname === n.to || (n.to !== '/' && pathname.startsWith(n.to + '/'))} onClick={close} />
        ))}
        <div role="group" aria-labelledby="nav-access">
          <Text id="nav-access" size="xs" fw={700} tt="uppercase" px="sm" pt="md" pb={4}>
            Access
          </Text>
          {accessNav.map((n) => (
            <NavLink key={n.to} component={Link} to={n.to} label={n.label} leftSection={navIcon(n.icon)} active={pathname === n.to} onClick={close} />
          ))}
        </div>
      </AppShell.Navbar>
      <AppShell.Main>
        <Suspense
          fallback={
            <Center p="lg">
              <Loader size="sm" aria-label="Loading" />
            </Center>
          }
        >
          <Routes>
            <Route path="/" element={<DashboardPage />} />
            <Route path="/buses" element={<BusesPage />} />
            <Route path="/buses/:bus" element={<BusPage />} />
            <Route path="/buses/:bus/events" element={<EventsPage />} />
            <Route path="/buses/:bus/archives" element={<ArchivesPage />} />
            <Route path="/replays" element={<ReplaysPage />} />
            <Route path="/replays/:replay" element={<ReplayPage />} />
            <Route path="/buses/:bus/tail" element={<TailPage />} />
            <Route path="/buses/:bus/log" element={<BusLogPage />} />
            <Route path="/buses/:bus/events/:id" element={<EventTracePage />} />
            <Route path="/buses/:bus/rules/:rule" element={<RulePage />} />
            <Route path="/buses/:bus/rules/:rule/targets/:target" element={<TargetPage />} />
            <Route path="/builder" element={<BuilderPage />} />
            <Route path="/builder/:bus/:rule" element={<BuilderPage />} />
            <Route path="/send" element={<SendEventsPage />} />
            <Route path="/runtime" element={<RuntimePage />} />
            <Route path="/dead-letters" element={<DeadLettersPage />} />
            <Route path="/dead-letters/:id" element={<DeadLetterPage />} />
            <Route path="/connections" element={<ConnectionsPage />} />
            <Route path="/connections/:name" element={<ConnectionPage />} />
            <Route path="/api-destinations" element={<ApiDestinationsPage />} />
            <Route path="/api-destinations/:name" element={<ApiDestinationPage />} />
            <Route path="/account/security" element={<SecurityPage session={s} />} />
            <Route path="/access" element={<Navigate to="/access/members" replace />} />
            <Route path="/access/members" element={<MembersPage />} />
            <Route path="/access/api-keys" element={<ApiKeysPage />} />
            <Route path="/access/access-keys" element={<AccessKeysPage />} />
            <Route path="/access/audit-log" element={<AuditLogPage />} />
            <Route path="*" element={<NotFoundPage />} />
          </Routes>
        </Suspense>
      </AppShell.Main>
    </AppShell>
  );
}
