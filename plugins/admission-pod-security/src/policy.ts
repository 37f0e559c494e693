import type { StatusCause } from '@skiff/api';
import { fieldErrors } from '@skiff/api/validation';
import { LABELS, LATEST_MINOR } from './names.js';

export const LEVELS = ['privileged', 'baseline', 'restricted'] as const;
export type Level = (typeof LEVELS)[number];

/** A policy version: a minor of Kubernetes 1.x, or `latest`. */
export type PolicyVersion = number | 'latest';

export interface LevelVersion {
  level: Level;
  version: PolicyVersion;
}

/** The level and version each mode applies. */
export interface Policy {
  enforce: LevelVersion;
  audit: LevelVersion;
  warn: LevelVersion;
}

export type Mode = keyof Policy;
export const MODES: readonly Mode[] = ['enforce', 'audit', 'warn'];

export const LEVEL_DETAIL = `must be one of ${LEVELS.join(', ')}`;
export const VERSION_DETAIL = 'must be "latest" or "v1.x"';
export const VERSION_PATTERN = '^(latest|v1\\.(0|[1-9][0-9]*))$';

export const isLevel = (value: string): value is Level => (LEVELS as readonly string[]).includes(value);

export function parseVersion(value: string): PolicyVersion | undefined {
  if (value === 'latest') return 'latest';
  const minor = /^v1\.(0|[1-9][0-9]*)$/.exec(value)?.[1];
  return minor === undefined ? undefined : Number(minor);
}

/** `restricted:latest`, `baseline:v1.30`: how messages and audit annotations name a policy. */
export const describe = (lv: LevelVersion): string => `${lv.level}:${lv.version === 'latest' ? 'latest' : `v1.${lv.version}`}`;

/** The minor whose checks apply: `latest` and versions newer than Skiff's are Skiff's own. */
export const effectiveMinor = (version: PolicyVersion): number => (version === 'latest' || version > LATEST_MINOR ? LATEST_MINOR : version);

/** How strict a level is, to compare two. */
export const strictness = (level: Level): number => LEVELS.indexOf(level);

export const fullyPrivileged = (policy: Policy): boolean => MODES.every((mode) => policy[mode].level === 'privileged');

/** Two level-versions that evaluate alike: both privileged, or the same level at the same version. */
export const equivalent = (a: LevelVersion, b: LevelVersion): boolean =>
  (a.level === 'privileged' && b.level === 'privileged') || (a.level === b.level && a.version === b.version);

export interface LabelledPolicy {
  policy: Policy;
  /** Labels that did not parse, as 422 causes (`metadata.labels[…]: Invalid value: …`). */
  errors: StatusCause[];
}

/**
 * The policy a namespace's labels choose, over the cluster's defaults. A label that does not parse still yields
 * a policy: an unknown enforce level enforces `restricted`, unknown audit and warn levels fall back to
 * `privileged`, an unknown version means `latest`. Without a warn label, warn follows an explicit enforce level
 * that is stricter than it (and its version too, unless warn-version is set).
 */
export function policyFromLabels(labels: Readonly<Record<string, string>> | undefined, defaults: Policy): LabelledPolicy {
  const policy: Policy = { enforce: { ...defaults.enforce }, audit: { ...defaults.audit }, warn: { ...defaults.warn } };
  const errors: StatusCause[] = [];
  if (!labels) return { policy, errors };
  const invalid = (key: string, value: string, detail: string) => errors.push(fieldErrors.invalid(`metadata.labels[${key}]`, value, detail));
  let enforceLevelSet = false;
  for (const mode of MODES) {
    const level = labels[LABELS[mode]];
    if (level !== undefined) {
      if (isLevel(level)) {
        policy[mode].level = level;
        if (mode === 'enforce') enforceLevelSet = true;
      } else {
        invalid(LABELS[mode], level, LEVEL_DETAIL);
        policy[mode].level = mode === 'enforce' ? 'restricted' : 'privileged';
      }
    }
    const versionKey = LABELS[`${mode}-version`];
    const version = labels[versionKey];
    if (version !== undefined) {
      const parsed = parseVersion(version);
      if (parsed === undefined) invalid(versionKey, version, VERSION_DETAIL);
      policy[mode].version = parsed ?? 'latest';
    }
  }
  if (labels[LABELS.warn] === undefined && enforceLevelSet && strictness(policy.enforce.level) > strictness(policy.warn.level)) {
    policy.warn.level = policy.enforce.level;
    if (labels[LABELS['warn-version']] === undefined) policy.warn.version = policy.enforce.version;
  }
  return { policy, errors };
}

/** Causes as Kubernetes prints a list of field errors: one alone, or several in brackets. */
export const aggregateCauses = (causes: readonly StatusCause[]): string => {
  const texts = causes.map((cause) => `${cause.field}: ${cause.message}`);
  return texts.length === 1 ? texts[0]! : `[${texts.join(', ')}]`;
};
