import { Button, Group, JsonInput, Modal, Pagination, Stack, Table, Text, TextInput, Title } from '@mantine/core';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useEffect, useState, type ReactNode } from 'react';
import { ErrorAlert, QueryState } from './states';
import { sentence, toast } from './toast';

export interface Page<T> {
  items: T[];
  nextToken?: string;
}

export interface Column<T> {
  label: string;
  render: (item: T) => ReactNode;
}

export interface ResourceListProps<T> {
  title: string;
  /** noun names one item in sentence case ("bus", "API destination"): the Create button says "Create bus". */
  noun: string;
  /** headingOrder is the level of the title: 1 for a page of its own (default), 2 inside a page. */
  headingOrder?: 1 | 2;
  /** minWidth is the width under which the table scrolls sideways in its own box, not the page (default 640). */
  minWidth?: number;
  queryKey: unknown[];
  /** load reads one page; namePrefix is passed when the API filters by name, else the page is searched here. */
  load: (nextToken: string | undefined, namePrefix: string) => Promise<Page<T>>;
  serverSearch?: boolean;
  nameOf: (item: T) => string;
  columns: Column<T>[];
  /** create posts a new item from the JSON the user wrote; example is the text the editor starts with. */
  create?: { run: (body: unknown) => Promise<unknown>; example: unknown };
  remove?: (item: T) => Promise<unknown>;
  /** edit replaces an item with the JSON the user wrote, starting from body(item). */
  edit?: { body: (item: T) => unknown; run: (item: T, body: unknown) => Promise<unknown> };
  actions?: (item: T) => ReactNode;
  emptyText?: string;
  /**
   * form renders a generated form for create (item undefined) and edit instead of the JSON editor; done is
   * called after a successful save.
   */
  form?: (item: T | undefined, done: () => void) => ReactNode;
  /** formCreate shows the Create button when form is set (create is for the JSON editor). */
  formCreate?: boolean;
  /** refetchInterval reads the page shown again every so many milliseconds (live health); none by default. */
  refetchInterval?: number;

}

/**
 * ResourceList is a searchable, paged list with create and delete (with confirmation). Paging follows the
 * API's nextToken: the tokens of the pages seen are kept so that one can page back.
 */
export function ResourceList<T>(p: ResourceListProps<T>) {
  const qc = useQueryClient();
  const [search, setSearch] = useState('');
  const [tokens, setTokens] = useState<(string | undefined)[]>([undefined]);
  const [page, setPage] = useState(1);
  const [creating, setCreating] = useState(false);
  const [body, setBody] = useState('');
  const [deleting, setDeleting] = useState<T | undefined>();
  const [editing, setEditing] = useState<T | undefined>();
  const [formItem, setFormItem] = useState<{ item: T | undefined } | undefined>();
  const prefix = p.serverSearch ? search : '';
  const query = useQuery({
    queryKey: [...p.queryKey, 'page', tokens[page - 1], prefix],
    queryFn: () => p.load(tokens[page - 1], prefix),
    refetchInterval: p.refetchInterval,
  });
  const next = query.data?.nextToken;
  // A page with a nextToken opens the next page.
  useEffect(() => {
    if (next && tokens.length === page) setTokens((t) => [...t, next]);
  }, [next, tokens.length, page]);

  const invalidate = () => qc.invalidateQueries({ queryKey: p.queryKey });
  const create = useMutation({
    mutationFn: async () => p.create!.run(JSON.parse(body)),
    onSuccess: () => {
      setCreating(false);
      const name = (JSON.parse(body) as { name?: unknown }).name;
      toast(typeof name === 'string' ? `${sentence(p.noun)} ${name} created` : `${sentence(p.noun)} created`);
      invalidate();
    },
  });
  const edit = useMutation({
    mutationFn: async (item: T) => p.edit!.run(item, JSON.parse(body)),
    onSuccess: (_, item) => {
      setEditing(undefined);
      toast(`${sentence(p.noun)} ${p.nameOf(item)} saved`);
      invalidate();
    },
  });
  const remove = useMutation({
    mutationFn: async (item: T) => p.remove!(item),
    onSuccess: (_, item) => {
      setDeleting(undefined);
      toast(`${sentence(p.noun)} ${p.nameOf(item)} deleted`);
      invalidate();
    },
  });

  return (
    <Stack>
      <Group justify="space-between">
        <Title order={p.headingOrder ?? 1} size={p.headingOrder === 2 ? 'h4' : 'h3'}>
          {p.title}
        </Title>
        <Group>
          <TextInput
            placeholder="Search by name"
            aria-label={`Search ${p.title}`}
            value={search}
            onChange={(e) => {
              setSearch(e.currentTarget.value);
              setTokens([undefined]);
              setPage(1);
            }}
          />
          {p.form && p.formCreate && (
            <Button onClick={() => setFormItem({ item: undefined })}>Create {p.noun}</Button>
          )}
          {p.create && !p.form && (
            <Button
              onClick={() => {
                setBody(JSON.stringify(p.create!.example, null, 2));
                create.reset();
                setCreating(true);
              }}
            >
              Create {p.noun}
            </Button>
          )}
        </Group>
      </Group>
      <QueryState
        query={query}
        isEmpty={(d) => d.items.filter((i) => p.nameOf(i).startsWith(search)).length === 0}
        empty={search ? `Nothing named ${search}…` : (p.emptyText ?? 'Nothing here yet.')}
      >
        {(d) => (
          <Table.ScrollContainer type="native" minWidth={p.minWidth ?? 640} aria-label={p.title}>
            <Table striped highlightOnHover>
              <Table.Thead>
                <Table.Tr>
                  {p.columns.map((c) => (
                    <Table.Th key={c.label}>{c.label}</Table.Th>
                  ))}
                  {(p.remove || p.actions || p.edit || p.form) && <Table.Th />}
                </Table.Tr>
              </Table.Thead>
              <Table.Tbody>
                {d.items
                  .filter((i) => p.nameOf(i).startsWith(search))
                  .map((i) => (
                    <Table.Tr key={p.nameOf(i)}>
                      {p.columns.map((c) => (
                        <Table.Td key={c.label}>{c.render(i)}</Table.Td>
                      ))}
                      {(p.remove || p.actions || p.edit || p.form) && (
                        <Table.Td>
                          <Group gap="xs" justify="flex-end">
                            {p.actions?.(i)}
                            {p.form && (
                              <Button size="xs" variant="light" onClick={() => setFormItem({ item: i })}>
                                Edit
                              </Button>
                            )}
                            {p.edit && !p.form && (
                              <Button
                                size="xs"
                                variant="light"
                                onClick={() => {
                                  setBody(JSON.stringify(p.edit!.body(i), null, 2));
                                  edit.reset();
                                  setEditing(i);
                                }}
                              >
                                Edit
                              </Button>
                            )}
                            {p.remove && (
                              <Button size="xs" color="red" variant="light" onClick={() => setDeleting(i)}>
                                Delete
                              </Button>
                            )}
                          </Group>
                        </Table.Td>
                      )}
                    </Table.Tr>
                  ))}
              </Table.Tbody>
            </Table>
          </Table.ScrollContainer>
        )}
      </QueryState>
      {tokens.length > 1 && <Pagination total={tokens.length} value={page} onChange={setPage} />}
      <Modal
        opened={formItem !== undefined}
        onClose={() => setFormItem(undefined)}
        title={formItem?.item ? `Edit ${p.nameOf(formItem.item)}` : `Create ${p.noun}`}
        size="lg"
      >
        {formItem &&
          p.form?.(formItem.item, () => {
            setFormItem(undefined);
            invalidate();
          })}
      </Modal>
      <Modal opened={creating} onClose={() => setCreating(false)} title={`Create ${p.noun}`} size="lg">
        <JsonInput autosize minRows={8} value={body} onChange={setBody} validationError="Not JSON" formatOnBlur aria-label="Body" />
        <ErrorAlert error={create.error} />
        <Group justify="flex-end" mt="sm">
          <Button onClick={() => create.mutate()} loading={create.isPending}>
            Create
          </Button>
        </Group>
      </Modal>
      <Modal opened={editing !== undefined} onClose={() => setEditing(undefined)} title={`Edit ${editing ? p.nameOf(editing) : ''}`} size="lg">
        <JsonInput autosize minRows={8} value={body} onChange={setBody} validationError="Not JSON" formatOnBlur aria-label="Body" />
        <ErrorAlert error={edit.error} />
        <Group justify="flex-end" mt="sm">
          <Button onClick={() => editing && edit.mutate(editing)} loading={edit.isPending}>
            Save
          </Button>
        </Group>
      </Modal>
      <Modal opened={deleting !== undefined} onClose={() => setDeleting(undefined)} title={`Delete ${p.noun}?`}>
        <Text>
          Delete <b>{deleting ? p.nameOf(deleting) : ''}</b>? This cannot be undone.
        </Text>
        <ErrorAlert error={remove.error} />
        <Group justify="flex-end" mt="sm">
          <Button variant="default" onClick={() => setDeleting(undefined)}>
            Cancel
          </Button>
          <Button color="red" onClick={() => deleting && remove.mutate(deleting)} loading={remove.isPending}>
            Delete
          </Button>
        </Group>
      </Modal>
    </Stack>
  );
}
