import { Anchor, Text, Title } from '@mantine/core';
import { Link } from 'react-router-dom';

export function NotFoundPage() {
  return (
    <>
      <Title order={1} size="h3">
        Not found
      </Title>
      <Text>
        This page does not exist. <Anchor component={Link} to="/buses">Go to the buses</Anchor>.
      </Text>
    </>
  );
}
