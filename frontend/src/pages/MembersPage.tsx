import { Alert, Autocomplete, Badge, Button, Code, Group, List, Modal, Paper, Select, Stack, Table, Text, TextInput, Title, VisuallyHidden } from '@mantine/core';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import { listMembers, listUsers, removeMember, setMember, type Member } from '../api/access';
import { ApiError, errorText } from '../api/problem';
import { AccessState, useCaller, type Caller } from '../components/Access';
import { ConfirmButton } from '../components/Detail';
import { ErrorAlert } from '../components/states';
import { RelativeTime } from '../components/Time';
import { isRole, matrix, roleGrants, roleOptions, roles, roleSummary, type Role } from './roles';

/**
 * MembersPage (/access/members) is the account's members and their roles: the list, a role changed in place, a
 * member removed after a confirmation, an existing user added with a role, and what each role may do (the matrix
 * of docs/identity.md). The account's administrators only (access.manage); other roles are told so, and still see
 * what each role may do.
 */
export function MembersPage() {
  const caller = useCaller();
  const qc = useQueryClient();
  const key = ['members', caller.account];
  const list = useQuery({ queryKey: key, queryFn: () => listMembers(caller.account), enabled: caller.account !== '' });
  const [notice, setNotice] = useState<string>();
  // A change that would take the caller's own right to manage members asks first.
  const [pending, setPending] = useState<{ member: Member; role: Role }>();
  const change = useMutation({
    mutationFn: ({ member, role }: { member: Member; role: Role }) => setMember(caller.account, member.username ?? '', role),
    onSuccess: (m, { member }) => {
      setPending(undefined);
      setNotice(`${member.username} now has the role ${m.role} in account ${caller.account}.`);
      void qc.invalidateQueries({ queryKey: key });
      if (member.username === caller.username) void qc.invalidateQueries({ queryKey: ['me'] });
    },
  });
  const isSelf = (m: Member) => caller.me?.kind === 'user' && m.username === caller.me.name;
  const losesAccess = (m: Member, role: Role) => isSelf(m) && !caller.instanceAdmin && !roleGrants(role, 'access.manage');

  return (
    <Stack maw={1200}>
      <Group justify="space-between">
        <Title order={1} size="h3">
          Members and roles
        </Title>
        <Button variant="default" onClick={() => qc.invalidateQueries({ queryKey: key })} loading={list.isFetching && !list.isPending}>
          Refresh
        </Button>
      </Group>
      <Text size="sm">
        The users who may sign in to account <b>{caller.account}</b>, each with one role here. A user is a member of any
        number of accounts; instance administrators are admin in every account without being members.
      </Text>
      {notice && (
        <Alert color="green" role="status" withCloseButton closeButtonLabel="Dismiss" onClose={() => setNotice(undefined)} data-testid="members-notice">
          {notice}
        </Alert>
      )}
      <ErrorAlert error={pending ? undefined : change.error} title="Could not change the role" />
      <AccessState query={list} what="the members of an account" caller={caller} isEmpty={(d) => d.items.length === 0} empty="No members yet. Add a user below.">
        {(d) => (
          <>
            <Table.ScrollContainer type="native" minWidth={560} pos="relative" aria-label="Members">
              <Table data-testid="members" verticalSpacing="xs">
                <Table.Thead>
                  <Table.Tr>
                    <Table.Th>User</Table.Th>
                    <Table.Th>Role</Table.Th>
                    <Table.Th>Member since</Table.Th>
                    <Table.Th>
                      <VisuallyHidden>Actions</VisuallyHidden>
                    </Table.Th>
                  </Table.Tr>
                </Table.Thead>
                <Table.Tbody>
                  {d.items.map((m) => (
                    <Table.Tr key={m.username} data-testid={`member-${m.username}`}>
                      <Table.Td>
                        <Group gap="xs" wrap="nowrap">
                          <Text size="sm" fw={500}>
                            {m.username}
                          </Text>
                          {isSelf(m) && (
                            <Badge size="sm" variant="outline">
                              you
                            </Badge>
                          )}
                        </Group>
                      </Table.Td>
                      <Table.Td>
                        <Select
                          size="xs"
                          w={130}
                          aria-label={`Role of ${m.username}`}
                          data={roleOptions}
                          value={m.role ?? null}
                          allowDeselect={false}
                          disabled={change.isPending && change.variables?.member.username === m.username}
                          onChange={(v) => {
                            if (!isRole(v ?? '') || v === m.role) return;
                            const role = v as Role;
                            setNotice(undefined);
                            if (losesAccess(m, role)) setPending({ member: m, role });
                            else change.mutate({ member: m, role });
                          }}
                        />
                      </Table.Td>
                      <Table.Td>
                        <Text size="sm">
                          <RelativeTime value={m.createdAt} />
                        </Text>
                      </Table.Td>
                      <Table.Td>
                        <ConfirmButton
                          label="Remove"
                          title={`Remove ${m.username} from account ${caller.account}?`}
                          question={
                            isSelf(m) && !caller.instanceAdmin
                              ? `You are ${m.username}: you lose access to account ${caller.account} at your next request. The user stays; only the membership ends.`
                              : `${m.username} loses access to account ${caller.account} at their next request. The user stays (an instance administrator deletes users); only the membership ends.`
                          }
                          color="red"
                          run={() => removeMember(caller.account, m.username ?? '')}
                          onDone={() => {
                            setNotice(`${m.username} is no longer a member of account ${caller.account}.`);
                            void qc.invalidateQueries({ queryKey: key });
                          }}
                        />
                      </Table.Td>
                    </Table.Tr>
                  ))}
                </Table.Tbody>
              </Table>
            </Table.ScrollContainer>
            {d.truncated && <Text size="sm">Only the first 10,000 members are listed.</Text>}
          </>
        )}
      </AccessState>
      {list.isSuccess && (
        <AddMember
          caller={caller}
          members={list.data.items}
          onAdded={(m) => {
            setNotice(`${m.username} is now a member of account ${caller.account} with the role ${m.role}.`);
            void qc.invalidateQueries({ queryKey: key });
          }}
        />
      )}
      <RoleTable />

      <Modal opened={pending !== undefined} onClose={() => setPending(undefined)} title="Change your own role?">
        <Text>
          With the role {pending?.role} you can no longer manage the members, keys and audit log of account {caller.account}; another
          administrator would have to give the role back.
        </Text>
        <ErrorAlert error={pending ? change.error : undefined} />
        <Group justify="flex-end" mt="sm">
          <Button variant="default" onClick={() => setPending(undefined)}>
            Cancel
          </Button>
          <Button color="red" loading={change.isPending} onClick={() => pending && change.mutate(pending)}>
            Change my role
          </Button>
        </Group>
      </Modal>
    </Stack>
  );
}

/** AddMember makes an existing user a member with a role (an instance administrator picks from every user). */
function AddMember({ caller, members, onAdded }: { caller: Caller; members: Member[]; onAdded: (m: Member) => void }) {
  const [username, setUsername] = useState('');
  const [role, setRole] = useState<Role | ''>('');
  const [errors, setErrors] = useState<{ username?: string; role?: string; form?: string }>({});
  const users = useQuery({ queryKey: ['users'], queryFn: listUsers, enabled: caller.instanceAdmin });
  const add = useMutation({
    mutationFn: (u: { username: string; role: Role }) => setMember(caller.account, u.username, u.role),
    onSuccess: (m) => {
      setUsername('');
      setRole('');
      onAdded(m);
    },
    onError: (err, u) => {
      if (err instanceof ApiError && err.status === 404) {
        setErrors({ username: `No user is named ${u.username}. An instance administrator creates users first.` });
      } else if (err instanceof ApiError && err.status === 400 && err.problem.field === 'role') setErrors({ role: err.message });
      else setErrors({ form: errorText(err) });
    },
  });

  function submit(e: FormEvent) {
    e.preventDefault();
    const name = username.trim().toLowerCase();
    const errs: typeof errors = {};
    const existing = members.find((m) => m.username === name);
    if (name === '') errs.username = 'Give the user name of an existing user.';
    else if (existing) errs.username = `${name} is already a member, with the role ${existing.role}: change the role in the list above.`;
    if (!isRole(role)) errs.role = 'Choose a role.';
    setErrors(errs);
    if (Object.keys(errs).length === 0 && isRole(role)) add.mutate({ username: name, role });
  }

  const memberNames = new Set(members.map((m) => m.username));
  const candidates = (users.data?.items ?? []).map((u) => u.username ?? '').filter((n) => n !== '' && !memberNames.has(n));
  const nameField = {
    label: 'User name',
    description: caller.instanceAdmin ? 'An existing user; create users with POST /api/v1/users.' : 'The login name of an existing user; instance administrators create users.',
    required: true,
    autoComplete: 'off',
    value: username,
    error: errors.username,
  };
  return (
    <Paper withBorder p="md" maw={560} component="form" onSubmit={submit} aria-labelledby="add-member-title" noValidate>
      <Stack gap="sm">
        <Title order={2} size="h4" id="add-member-title">
          Add a member
        </Title>
        {caller.instanceAdmin ? (
          <Autocomplete {...nameField} data={candidates} onChange={setUsername} />
        ) : (
          <TextInput {...nameField} onChange={(e) => setUsername(e.currentTarget.value)} />
        )}
        <Select
          label="Role"
          required
          placeholder="Choose a role"
          description={isRole(role) ? roleSummary[role] : undefined}
          data={roleOptions}
          value={role || null}
          onChange={(v) => setRole(isRole(v ?? '') ? (v as Role) : '')}
          allowDeselect={false}
          error={errors.role}
        />
        {errors.form && (
          <Alert color="red" role="alert" title="Could not add the member">
            {errors.form}
          </Alert>
        )}
        <Group>
          <Button type="submit" loading={add.isPending}>
            Add member
          </Button>
        </Group>
      </Stack>
    </Paper>
  );
}

/** RoleTable says what each role may do: a sentence per role, and the permissions each grants. */
function RoleTable() {
  return (
    <Stack gap="xs">
      <Title order={2} size="h4">
        What each role may do
      </Title>
      <List size="sm" spacing={4}>
        {roles.map((r) => (
          <List.Item key={r}>
            <b>{r}</b>: {roleSummary[r]}
          </List.Item>
        ))}
      </List>
      {/* Relative, so that the visually hidden texts of the cells (placed absolutely) scroll with the table rather
          than widen the page; the access pages' other tables do the same. */}
      <Table.ScrollContainer type="native" minWidth={760} pos="relative" aria-label="Permissions of each role">
        <Table data-testid="role-matrix" verticalSpacing={4} withTableBorder>
          <Table.Thead>
            <Table.Tr>
              <Table.Th>Permission</Table.Th>
              <Table.Th>Allows</Table.Th>
              {roles.map((r) => (
                <Table.Th key={r} ta="center">
                  {r}
                </Table.Th>
              ))}
            </Table.Tr>
          </Table.Thead>
          <Table.Tbody>
            {matrix.map((row) => (
              <Table.Tr key={row.permission}>
                <Table.Td>
                  <Code>{row.permission}</Code>
                </Table.Td>
                <Table.Td>
                  <Text size="sm">{row.allows}</Text>
                </Table.Td>
                {roles.map((r) => (
                  <Table.Td key={r} ta="center">
                    {row.roles.includes(r) ? (
                      <>
                        <span aria-hidden="true">✓</span>
                        <VisuallyHidden>yes</VisuallyHidden>
                      </>
                    ) : (
                      <VisuallyHidden>no</VisuallyHidden>
                    )}
                  </Table.Td>
                ))}
              </Table.Tr>
            ))}
          </Table.Tbody>
        </Table>
      </Table.ScrollContainer>
    </Stack>
  );
}
