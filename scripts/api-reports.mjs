#!/usr/bin/env node
// The public surface of every published package, as API Extractor reports it from the built type
// declarations: one report per entry point, checked in beside the package (`<dir>/etc/*.api.md`), so a change
// to what a package exports shows in review.
//
//   node scripts/api-reports.mjs            check: fails when a report differs from the built declarations
//   node scripts/api-reports.mjs --update   write the reports anew (then review and commit them)
//
// Needs the packages built (`npm run build`; `npm ci` builds them). `npm run check` runs the check.
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { Extractor, ExtractorConfig, ExtractorLogLevel } from '@microsoft/api-extractor';
import { publishablePackages, REPO_ROOT } from './workspace-packages.mjs';

const update = process.argv.includes('--update');

/** The entry points a package exports with type declarations: `.` and any subpaths (`./validation`). */
export function entryPoints(pkg) {
  const entries = [];
  for (const [subpath, target] of Object.entries(pkg.exports ?? {})) {
    const types = typeof target === 'object' ? target.types : undefined;
    if (typeof types === 'string' && types.endsWith('.d.ts')) entries.push({ subpath, types });
  }
  return entries;
}

/** The report's file name: the package's unscoped name, and the subpath for a subpath entry. */
function reportName(pkg, subpath) {
  const base = pkg.name.replace(/^@[^/]+\//, '');
  return subpath === '.' ? `${base}.api.md` : `${base}.${subpath.replace(/^\.\//, '').replace(/\//g, '-')}.api.md`;
}

function run() {
  let failed = 0;
  let checked = 0;
  for (const { dir, pkg } of publishablePackages()) {
    const packageFolder = join(REPO_ROOT, dir);
    for (const { subpath, types } of entryPoints(pkg)) {
      const entry = join(packageFolder, types);
      if (!existsSync(entry)) {
        console.error(`${dir}: ${types} is missing — build first (npm run build)`);
        failed++;
        continue;
      }
      const reportFolder = join(packageFolder, 'etc');
      const reportFileName = reportName(pkg, subpath);
      mkdirSync(reportFolder, { recursive: true });
      const config = ExtractorConfig.prepare({
        configObject: {
          projectFolder: packageFolder,
          mainEntryPointFilePath: entry,
          compiler: { overrideTsconfig: { compilerOptions: { lib: ['es2023'], types: ['node'], skipLibCheck: true, strict: true } } },
          apiReport: { enabled: true, reportFileName, reportFolder, reportTempFolder: join(REPO_ROOT, '.api-reports-temp') },
          docModel: { enabled: false },
          dtsRollup: { enabled: false },
          tsdocMetadata: { enabled: false },
          messages: {
            compilerMessageReporting: { default: { logLevel: 'warning' } },
            extractorMessageReporting: {
              default: { logLevel: 'none' },
              'ae-missing-release-tag': { logLevel: 'none' },
            },
            tsdocMessageReporting: { default: { logLevel: 'none' } },
          },
        },
        configObjectFullPath: join(packageFolder, 'api-extractor.json'),
        packageJsonFullPath: join(packageFolder, 'package.json'),
      });
      const result = Extractor.invoke(config, {
        localBuild: update,
        showVerboseMessages: false,
        messageCallback: (message) => {
          // Compiler chatter about the declarations themselves is not this check's business.
          if (message.logLevel !== ExtractorLogLevel.Error) message.handled = true;
        },
      });
      checked++;
      const report = relative(REPO_ROOT, join(reportFolder, reportFileName));
      if (result.apiReportChanged && !update) {
        console.error(`${report} differs from ${relative(REPO_ROOT, entry)}: run node scripts/api-reports.mjs --update and review the change`);
        failed++;
      } else if (!result.succeeded && !result.apiReportChanged) {
        console.error(`${report}: API Extractor failed (${result.errorCount} errors)`);
        failed++;
      }
    }
  }
  console.log(`api reports: ${checked} checked, ${failed} ${update ? 'failed' : 'differ or failed'}`);
  return failed === 0;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const ok = run();
  // The temp folder holds the reports as built, for a diff against the checked-in ones.
  if (!ok && !update && existsSync(join(REPO_ROOT, '.api-reports-temp')))
    writeFileSync(join(REPO_ROOT, '.api-reports-temp', 'README'), readFileSync(new URL(import.meta.url), 'utf8').split('\n')[1] + '\n');
  process.exit(ok ? 0 : 1);
}
