// Table columns shared by the built-in kinds, with the descriptions kubectl's printers use.
import { humanAge, labelSelectorFromObject, type Container, type KubeObject, type LabelSelector } from '@skiff/api';
import type { TableColumn } from '@skiff/kernel';

const NAME_DESCRIPTION =
  'Name must be unique within a namespace. Is required when creating resources, although some resources may allow a client to request the generation of an appropriate name automatically. Name is primarily intended for creation idempotence and configuration definition. Cannot be updated. More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/names#names';

const CREATION_TIMESTAMP_DESCRIPTION =
  'CreationTimestamp is a timestamp representing the server time when this object was created. It is not guaranteed to be set in happens-before order across separate operations. Clients may not set this value. It is represented in RFC3339 form and is in UTC.\n\nPopulated by the system. Read-only. Null for lists. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata';

/** A column; priority 1 columns print only with `-o wide`. */
export function column(name: string, description: string, priority: 0 | 1 = 0, type: TableColumn['type'] = 'string'): TableColumn {
  return { name, type, description, priority };
}

export const NAME_COLUMN: TableColumn = { name: 'Name', type: 'string', format: 'name', description: NAME_DESCRIPTION, priority: 0 };
export const AGE_COLUMN = column('Age', CREATION_TIMESTAMP_DESCRIPTION);
export const CONTAINERS_COLUMN = column('Containers', 'Names of each container in the template.', 1);
export const IMAGES_COLUMN = column('Images', 'Images referenced by each container in the template.', 1);

/** The AGE cell: how long ago the object was created, `<unknown>` without a timestamp. */
export const age = (object: KubeObject, now: number): string => humanAge(object.metadata.creationTimestamp, now);

/** The Containers and Images cells: names and images, comma-separated. */
export function containerCells(containers: Container[] | undefined): [string, string] {
  const list = containers ?? [];
  return [list.map((c) => c.name).join(','), list.map((c) => c.image ?? '').join(',')];
}

/** The Selector cell: the selector's string form, `<invalid>` when it cannot be compiled. */
export function selectorCell(selector: LabelSelector | undefined): string {
  try {
    return labelSelectorFromObject(selector).toString();
  } catch {
    return '<invalid>';
  }
}
