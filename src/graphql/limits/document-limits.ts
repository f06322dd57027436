import { Kind, type ASTVisitor, type FragmentDefinitionNode, type SelectionSetNode, type ValidationContext } from 'graphql';
import { limitError } from './limit-errors.js';

export interface DocumentLimits {
  maxDepth: number;
  maxAliases: number;
  maxDirectives: number;
}

/**
 * A validation rule for what the document alone decides: depth, aliases and directives (the
 * token count is checked while parsing). Its result depends on the document only, so Yoga's
 * validation cache may keep it.
 */
export function documentLimitsRule(limits: DocumentLimits) {
  return (context: ValidationContext): ASTVisitor => {
    let aliases = 0;
    let directives = 0;
    return {
      Field: (node) => void (node.alias && aliases++),
      Directive: () => void directives++,
      Document: {
        leave: (document) => {
          if (aliases > limits.maxAliases) {
            context.reportError(
              limitError('TOO_MANY_ALIASES', `The document uses ${aliases} aliases; at most ${limits.maxAliases} are allowed.`, {
                aliases,
                limit: limits.maxAliases,
              }),
            );
          }
          if (directives > limits.maxDirectives) {
            context.reportError(
              limitError(
                'TOO_MANY_DIRECTIVES',
                `The document uses ${directives} directives; at most ${limits.maxDirectives} are allowed.`,
                {
                  directives,
                  limit: limits.maxDirectives,
                },
              ),
            );
          }
          const fragments = new Map(
            document.definitions
              .filter((d): d is FragmentDefinitionNode => d.kind === Kind.FRAGMENT_DEFINITION)
              .map((d) => [d.name.value, d]),
          );
          const depth = new DepthMeter(fragments);
          for (const definition of document.definitions) {
            if (definition.kind !== Kind.OPERATION_DEFINITION) continue;
            const found = depth.of(definition.selectionSet, []);
            if (found > limits.maxDepth) {
              context.reportError(
                limitError('QUERY_TOO_DEEP', `The operation is ${found} fields deep; at most ${limits.maxDepth} levels are allowed.`, {
                  depth: found,
                  limit: limits.maxDepth,
                }),
              );
            }
          }
        },
      },
    };
  };
}

/**
 * Depth in fields, through fragments (each fragment measured once). Introspection's `ofType`
 * chains do not count: they are how a type reference is spelled, and standard introspection
 * queries nest them nine deep.
 */
class DepthMeter {
  private readonly fragmentDepths = new Map<string, number>();

  constructor(private readonly fragments: ReadonlyMap<string, FragmentDefinitionNode>) {}

  of(selectionSet: SelectionSetNode, entered: readonly string[]): number {
    let deepest = 0;
    for (const selection of selectionSet.selections) {
      if (selection.kind === Kind.FIELD) {
        const own = selection.name.value === 'ofType' ? 0 : 1;
        deepest = Math.max(deepest, own + (selection.selectionSet ? this.of(selection.selectionSet, entered) : 0));
      } else if (selection.kind === Kind.INLINE_FRAGMENT) {
        deepest = Math.max(deepest, this.of(selection.selectionSet, entered));
      } else {
        deepest = Math.max(deepest, this.fragment(selection.name.value, entered));
      }
    }
    return deepest;
  }

  /** A cycle (which validation reports) or an unknown fragment adds nothing here. */
  private fragment(name: string, entered: readonly string[]): number {
    const known = this.fragmentDepths.get(name);
    if (known !== undefined) return known;
    const fragment = this.fragments.get(name);
    if (!fragment || entered.includes(name)) return 0;
    const depth = this.of(fragment.selectionSet, [...entered, name]);
    this.fragmentDepths.set(name, depth);
    return depth;
  }
}
