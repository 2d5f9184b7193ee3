import { Anchor, Breadcrumbs, Button, Group, Modal, Table, Text, type ButtonProps } from '@mantine/core';
import { useMutation } from '@tanstack/react-query';
import { useState, type ReactNode } from 'react';
import { Link } from 'react-router-dom';
import { ErrorAlert } from './states';

/** Crumbs is the path to a detail page: [label, link] pairs, the last without a link. */
export function Crumbs({ items }: { items: [string, string?][] }) {
  return (
    <Breadcrumbs>
      {items.map(([label, to]) =>
        to ? (
          <Anchor key={label + to} component={Link} to={to}>
            {label}
          </Anchor>
        ) : (
          <Text key={label}>{label}</Text>
        ),
      )}
    </Breadcrumbs>
  );
}

/** Fields is a two-column table of a resource's attributes; rows whose value is empty are left out. */
export function Fields({ rows }: { rows: [string, ReactNode][] }) {
  return (
    <Table withRowBorders={false} maw={900} layout="fixed">
      <Table.Tbody>
        {rows
          .filter(([, v]) => v !== undefined && v !== null && v !== '')
          .map(([k, v]) => (
            <Table.Tr key={k}>
              <Table.Th w={{ base: 120, sm: 220 }} style={{ verticalAlign: 'top' }}>
                {k}
              </Table.Th>
              <Table.Td style={{ overflowWrap: 'anywhere' }}>{v}</Table.Td>
            </Table.Tr>
          ))}
      </Table.Tbody>
    </Table>
  );
}

/**
 * ConfirmButton asks before it runs an action; the action's error is shown in the dialog in plain words, and
 * onDone gets its answer.
 */
export function ConfirmButton<R>({
  label,
  title,
  question,
  run,
  onDone,
  color,
  variant = 'light',
  disabled,
}: {
  label: string;
  title: string;
  question: ReactNode;
  run: () => Promise<R>;
  onDone?: (r: R) => void;
  color?: string;
  variant?: ButtonProps['variant'];
  /** disabled greys the button out (nothing selected, say). */
  disabled?: boolean;
}) {
  const [open, setOpen] = useState(false);
  const m = useMutation({
    mutationFn: run,
    onSuccess: (r) => {
      setOpen(false);
      onDone?.(r);
    },
  });
  return (
    <>
      <Button
        size="xs"
        color={color}
        variant={variant}
        disabled={disabled}
        onClick={() => {
          m.reset();
          setOpen(true);
        }}
      >
        {label}
      </Button>
      <Modal opened={open} onClose={() => setOpen(false)} title={title}>
        <Text>{question}</Text>
        <ErrorAlert error={m.error} />
        <Group justify="flex-end" mt="sm">
          <Button variant="default" onClick={() => setOpen(false)}>
            Cancel
          </Button>
          <Button color={color} onClick={() => m.mutate()} loading={m.isPending}>
            {label}
          </Button>
        </Group>
      </Modal>
    </>
  );
}
