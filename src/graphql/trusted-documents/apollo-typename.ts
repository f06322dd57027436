import { Kind, parse, print, visit, type FieldNode, type SelectionSetNode } from 'graphql';

const TYPENAME: FieldNode = { kind: Kind.FIELD, name: { kind: Kind.NAME, value: '__typename' } };

/**
 * The document as Apollo Client sends it with its default InMemoryCache, which adds `__typename`
 * to every selection set before hashing (the rules of Apollo's `addTypenameToDocument`: not on an
 * operation's root, not where a `__` field is already selected, not under `@export`).
 */
export function withApolloTypenames(body: string): string {
  const document = visit(parse(body), {
    SelectionSet: {
      enter(node: SelectionSetNode, _key, parent) {
        if (parent && !Array.isArray(parent) && (parent as { kind?: string }).kind === Kind.OPERATION_DEFINITION) return undefined;
        if (node.selections.some((selection) => selection.kind === Kind.FIELD && selection.name.value.startsWith('__'))) return undefined;
        const field = parent as FieldNode | undefined;
        if (field?.kind === Kind.FIELD && field.directives?.some((directive) => directive.name.value === 'export')) return undefined;
        return { ...node, selections: [...node.selections, TYPENAME] };
      },
    },
  });
  return print(document);
}
