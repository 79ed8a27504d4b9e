#!/usr/bin/env node
// `npm run build`: compiles src/ to dist/ (tsconfig.build.json) with the TypeScript API,
// hiding internals from the published declarations, then type-checks those declarations.
//
// Internals: every class, interface or type-literal MEMBER whose doc comment carries
// `@internal` is left out of the emitted .d.ts (an `@internal` constructor becomes
// `constructor(internal: { readonly 'polestar internal constructor': never });`, so
// `new Agent()` or `new Tools(ctx)` is a type error, while the class stays usable as a
// token: `ctx.get(Tools)` needs a public construct signature, which `protected` removed). Top-level
// declarations stay even when tagged `@internal`: public types refer to some of them
// (`Tools extends ContextView<ToolRegistry>`), and tsc's own `stripInternal`, which drops
// them too, leaves such references dangling in the published types. Top-level internals
// are not re-exported from the package's entry points, so consumers can not import them.
//
// Then dist/**/*.d.ts is type-checked on its own (skipLibCheck off), so a published
// declaration that refers to something missing fails here rather than in a consumer.
/* global __dirname */
const ts = require('typescript');
const path = require('node:path');

const repo = path.resolve(__dirname, '..');
const host = {
  getCanonicalFileName: (f) => f,
  getCurrentDirectory: () => repo,
  getNewLine: () => ts.sys.newLine,
};

function report(diagnostics) {
  if (diagnostics.length === 0) return false;
  const pretty = process.stdout.isTTY ? ts.formatDiagnosticsWithColorAndContext : ts.formatDiagnostics;
  console.error(pretty(diagnostics, host));
  return diagnostics.some((d) => d.category === ts.DiagnosticCategory.Error);
}

function parse(configFile) {
  const parsed = ts.getParsedCommandLineOfConfigFile(path.join(repo, configFile), {}, { ...ts.sys, onUnRecoverableConfigFileDiagnostic: (d) => report([d]) });
  if (parsed === undefined) process.exit(1);
  if (report(parsed.errors)) process.exit(1);
  return parsed;
}

/** Whether the declaration a (possibly synthesized) node came from has an `@internal` doc comment. */
function isInternal(node) {
  const original = ts.getOriginalNode(node);
  const sf = original.getSourceFile?.();
  if (sf === undefined) return false;
  const ranges = ts.getLeadingCommentRanges(sf.text, original.pos) ?? [];
  return ranges.some((r) => r.kind === ts.SyntaxKind.MultiLineCommentTrivia && /^\/\*\*[\s\S]*@internal\b/.test(sf.text.slice(r.pos, r.end)));
}

/** afterDeclarations transformer: drops `@internal` members (see the header). */
function stripInternalMembers(context) {
  const f = context.factory;
  const members = (list, inClass) =>
    list.flatMap((m) => {
      if (!isInternal(m)) return [m];
      if (inClass && ts.isConstructorDeclaration(m)) return [f.createConstructorDeclaration(undefined, [f.createParameterDeclaration(undefined, undefined, 'internal', undefined, f.createTypeLiteralNode([f.createPropertySignature([f.createModifier(ts.SyntaxKind.ReadonlyKeyword)], f.createStringLiteral('polestar internal constructor'), undefined, f.createKeywordTypeNode(ts.SyntaxKind.NeverKeyword))]))], undefined)];
      return [];
    });
  const visit = (node) => {
    if (ts.isClassDeclaration(node)) {
      node = f.updateClassDeclaration(node, node.modifiers, node.name, node.typeParameters, node.heritageClauses, members(node.members, true));
    } else if (ts.isInterfaceDeclaration(node)) {
      node = f.updateInterfaceDeclaration(node, node.modifiers, node.name, node.typeParameters, node.heritageClauses, members(node.members, false));
    } else if (ts.isTypeLiteralNode(node)) {
      node = f.updateTypeLiteralNode(node, f.createNodeArray(members(node.members, false)));
    }
    return ts.visitEachChild(node, visit, context);
  };
  return (sf) => (ts.isSourceFile(sf) ? ts.visitEachChild(sf, visit, context) : sf);
}

// ---------------------------------------------------------------- compile
const build = parse('tsconfig.build.json');
if (build.options.stripInternal) {
  console.error('build: tsconfig.build.json must not set stripInternal (it drops top-level declarations public types refer to); scripts/build.cjs strips @internal members.');
  process.exit(1);
}
const program = ts.createProgram({ rootNames: build.fileNames, options: build.options, projectReferences: build.projectReferences });
const emitted = program.emit(undefined, undefined, undefined, false, { afterDeclarations: [stripInternalMembers] });
const failed = report([...ts.getPreEmitDiagnostics(program), ...emitted.diagnostics]);
if (failed || emitted.emitSkipped) process.exit(1);

// ---------------------------------------------------------------- check what consumers get
const dts = parse('tsconfig.dts.json');
const check = ts.createProgram({ rootNames: dts.fileNames, options: dts.options });
if (report(ts.getPreEmitDiagnostics(check))) {
  console.error('build: the published declarations (dist/**/*.d.ts) do not type-check on their own (see above).');
  process.exit(1);
}
