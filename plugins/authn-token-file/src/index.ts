import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import type { UserInfo } from '@skiff/api';
import { authenticateBearerToken, CHAIN_STAGE, definePlugin, KernelError, packageInfo, writeFileAtomically, type PluginOptions } from '@skiff/kernel';
import { formatTokenLine, parseTokenFile } from './tokens.js';

export const PLUGIN_NAME = '@skiff/plugin-authn-token-file';

const ADMIN: UserInfo = { username: 'admin', uid: 'admin', groups: ['system:masters', 'system:authenticated'] };

/**
 * Static bearer tokens (kube-apiserver's --token-auth-file). Requests with `Authorization: Bearer <t>`
 * whose token is in the file authenticate as that user; an unknown token is rejected with a reason.
 */
const plugin = definePlugin({
  ...packageInfo(new URL('../package.json', import.meta.url)),
  name: PLUGIN_NAME,
  options: {
    type: 'object',
    properties: {
      file: { type: 'string', default: 'tokens.csv', description: 'Token file (CSV: token,user,uid,"groups"); relative paths are taken from the data dir' },
      bootstrapAdmin: {
        type: 'boolean',
        default: true,
        description: 'On first start, create the file with an admin token (group system:masters) when missing',
      },
    },
  },
  apply(kernel, options) {
    let tokens = new Map<string, UserInfo>();

    kernel.lifecycle(PLUGIN_NAME, -250, {
      start() {
        const file = resolve(kernel.config.dataDir, options.file);
        if (!existsSync(file)) {
          if (!options.bootstrapAdmin)
            throw new KernelError('SKIFF_ERR_KERNEL_PLUGIN_OPTIONS', { name: PLUGIN_NAME, detail: `token file ${file} does not exist` });
          // Atomically: a client reading the admin token during the first start never finds the file empty.
          writeFileAtomically(file, `# token,user,uid,"groups"\n${formatTokenLine(randomBytes(24).toString('base64url'), ADMIN)}\n`, 0o600);
        }
        try {
          tokens = parseTokenFile(readFileSync(file, 'utf8'), file);
        } catch (err) {
          throw new KernelError('SKIFF_ERR_KERNEL_PLUGIN_OPTIONS', { name: PLUGIN_NAME, detail: (err as Error).message });
        }
        const admin = [...tokens].find(([, user]) => user.groups.includes('system:masters'));
        if (admin) kernel.provide('adminCredential', { token: admin[0], username: admin[1].username });
      },
    });

    kernel.hooks.authenticate.tapPromise({ name: PLUGIN_NAME, stage: CHAIN_STAGE.TOKEN }, (request) =>
      authenticateBearerToken(request, (token) => {
        const user = tokens.get(token);
        return user ? { user: { ...{}, ...user, groups: [...new Set([...user.groups, 'system:authenticated'])] } } : { error: 'invalid bearer token' };
      }),
    );
  },
});
export default plugin;

export type TokenFileOptions = PluginOptions<typeof plugin>;
