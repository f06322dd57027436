import { Kind, visit, type ASTNode, type DocumentNode } from 'graphql';

const VALUE_KINDS = new Set<string>([
  Kind.INT,
  Kind.FLOAT,
  Kind.STRING,
  Kind.BOOLEAN,
  Kind.NULL,
  Kind.ENUM,
  Kind.LIST,
  Kind.OBJECT,
  Kind.OBJECT_FIELD,
  Kind.VARIABLE,
]);

export function isArgumentValue(node: ASTNode): boolean {
  return VALUE_KINDS.has(node.kind);
}

/**
 * Where each wanted node sits inside an argument, written as clients read it: `inputs[2].occurredAt`
 * (argument, list indexes, input fields). Nodes outside any argument are left out.
 */
export function argumentPaths(document: DocumentNode, wanted: (node: ASTNode) => boolean): Map<ASTNode, string> {
  const paths = new Map<ASTNode, string>();
  visit(document, {
    enter(node, key, parent, keys, ancestors) {
      if (!wanted(node)) return;
      const chain = [...ancestors, parent, node];
      const path = [...keys, key];
      let written = '';
      chain.forEach((step, j) => {
        if (!step || typeof step !== 'object') return;
        if (Array.isArray(step)) {
          const owner = chain[j - 1] as ASTNode | undefined;
          if (owner && !Array.isArray(owner) && owner.kind === Kind.LIST && written) written += `[${String(path[j])}]`;
          return;
        }
        const astNode = step as ASTNode;
        if (astNode.kind === Kind.ARGUMENT) written = astNode.name.value;
        else if (astNode.kind === Kind.OBJECT_FIELD && written) written += `.${astNode.name.value}`;
        else if (astNode.kind === Kind.FIELD || astNode.kind === Kind.DIRECTIVE) written = '';
      });
      if (written) paths.set(node, written);
    },
  });
  return paths;
}

/** Variable name → where it is used as (part of) an argument; the first use when several. */
export function variableArguments(document: DocumentNode): Map<string, string> {
  const byVariable = new Map<string, string>();
  const paths = argumentPaths(document, (node) => node.kind === Kind.VARIABLE);
  for (const [node, path] of paths) {
    if (node.kind === Kind.VARIABLE && !byVariable.has(node.name.value)) byVariable.set(node.name.value, path);
  }
  return byVariable;
}

/** graphql-js's text for a field missing from, or unknown to, an input object: its name, to add to the path. */
export function fieldNamedIn(message: string): string | null {
  return (
    /Field "(?:[_A-Za-z][_0-9A-Za-z]*\.)?([_A-Za-z][_0-9A-Za-z]*)" (?:of required type .* was not provided|is not defined by type)/.exec(
      message,
    )?.[1] ?? null
  );
}
