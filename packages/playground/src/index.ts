// The playground's exports: the tool console, its call parser, plugin discovery and host.
export { runConsole, textOf, USAGE, type ConsoleOptions } from './console.ts'
export { parseArgv, parseLine, tokenizeLine, CallSyntaxError, type ParsedCall } from './args.ts'
export { discoverPlugins, loadablePlugins, type PluginPackage } from './plugins.ts'
export { bootConsoleHost, type ConsoleHost } from './host.ts'
