/**
 * The YAML library, in a module of its own: the verbs that print or read YAML load it only then
 * (a static import here also gives the compiled package its named exports, which a dynamic
 * import of the CommonJS package itself would not).
 */
export { parse, stringify } from 'yaml';
