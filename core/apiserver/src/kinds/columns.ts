// Table columns shared by the built-in kinds. Descriptions stay empty: upstream's printer prose is not copied.
import {
  AGE_COLUMN,
  labelSelectorFromObject,
  readJsonPath,
  type ColumnSpec,
  type Container,
  type KubeObject,
  type LabelSelector,
  type TableColumn,
} from '@skiff/api';

export { AGE_COLUMN };

/** The Name column, for kinds that print it somewhere other than first (events print it last, wide). */
export const NAME_COLUMN: ColumnSpec = { name: 'Name', format: 'name', cell: (object: KubeObject) => object.metadata.name };

/** A column of one value at a JSON path. */
export function column(name: string, jsonPath: string, options: { type?: TableColumn['type']; priority?: 0 | 1 } = {}): ColumnSpec {
  return { name, jsonPath, ...options };
}

/** A column computed from the object (typed as the kind it is declared for). */
export function computed<T extends KubeObject>(
  name: string,
  cell: (object: T, now: number) => unknown,
  options: { type?: TableColumn['type']; priority?: 0 | 1 } = {},
): ColumnSpec<T> {
  return { name, cell, ...options };
}

/** The Selector cell: the selector's string form, `<none>` for none, `<invalid>` when it cannot be compiled. */
export function selectorCell(selector: LabelSelector | undefined): string {
  try {
    return labelSelectorFromObject(selector).toString() || '<none>';
  } catch {
    return '<invalid>';
  }
}

/** Containers and Images (wide) of the pod template at `templatePath`, then the Selector at `selectorPath` (wide). */
export function templateColumns(templatePath: string, selectorPath?: string): ColumnSpec[] {
  const containers = (object: KubeObject) => (readJsonPath(object, `${templatePath}.spec.containers`)[0] as Container[] | undefined) ?? [];
  return [
    computed(
      'Containers',
      (object) =>
        containers(object)
          .map((c) => c.name)
          .join(','),
      { priority: 1 },
    ),
    computed(
      'Images',
      (object) =>
        containers(object)
          .map((c) => c.image ?? '')
          .join(','),
      { priority: 1 },
    ),
    ...(selectorPath
      ? [computed('Selector', (object) => selectorCell(readJsonPath(object, selectorPath)[0] as LabelSelector | undefined), { priority: 1 })]
      : []),
  ];
}
