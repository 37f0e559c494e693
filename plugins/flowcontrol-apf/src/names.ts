import { RESOURCES, type UserInfo } from '@skiff/api';

/** The plugin's name, for a config entry that sets its options or removes it. */
export const PLUGIN_NAME = '@skiff/plugin-flowcontrol-apf';

export const FLOW_SCHEMAS = RESOURCES.flowschemas;
export const PRIORITY_LEVELS = RESOURCES.prioritylevelconfigurations;

/** `"true"`: the API server keeps the object's spec as its bootstrap configuration says; `"false"`: hands off. */
export const AUTO_UPDATE_ANNOTATION = 'apf.kubernetes.io/autoupdate-spec';

/** Response headers naming the FlowSchema and the priority level a request was classified into. */
export const FLOW_SCHEMA_UID_HEADER = 'X-Kubernetes-PF-FlowSchema-UID';
export const PRIORITY_LEVEL_UID_HEADER = 'X-Kubernetes-PF-PriorityLevel-UID';

/** The state of each priority level, as text, for an administrator (the path Kubernetes serves it at). */
export const DUMP_PRIORITY_LEVELS_PATH = '/debug/api_priority_and_fairness/dump_priority_levels';

/** Who the plugin's own requests come from: the API server itself, so they are exempt. */
export const APF_USER: UserInfo = Object.freeze({
  username: 'system:apiserver',
  uid: 'system:apiserver',
  groups: ['system:masters', 'system:authenticated'],
});
