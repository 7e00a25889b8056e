/**
 * `lifeboat completion bash|zsh`: the script a shell sources to complete `lifeboat` command
 * lines. Each asks `lifeboat __complete WORD…` (completion.ts) for the candidates of the word
 * being typed, or for the shell's own file or directory completion (first line `:files`, `:dirs`).
 */
import { type FlagSpec, UsageError } from './flags.js';
import type { VerbCall } from './verb-call.js';

const BASH = `# bash completion for lifeboat: source <(lifeboat completion bash)
# (or save it as /etc/bash_completion.d/lifeboat)
_lifeboat() {
  local cur="\${COMP_WORDS[COMP_CWORD]}"
  local IFS=$'\\n'
  local -a candidates
  candidates=($(lifeboat __complete "\${COMP_WORDS[@]:1:COMP_CWORD}" 2>/dev/null))
  case "\${candidates[0]}" in
    :files) COMPREPLY=($(compgen -f -- "$cur")) ;;
    :dirs) COMPREPLY=($(compgen -d -- "$cur")) ;;
    *) COMPREPLY=($(compgen -W "\${candidates[*]}" -- "$cur")) ;;
  esac
}
complete -o filenames -F _lifeboat lifeboat
`;

const ZSH = `#compdef lifeboat
# zsh completion for lifeboat: source <(lifeboat completion zsh) after compinit
# (or save it as _lifeboat in a directory of $fpath)
_lifeboat() {
  local -a candidates
  candidates=("\${(@f)$(lifeboat __complete "\${(@)words[2,CURRENT]}" 2>/dev/null)}")
  candidates=(\${candidates:#})
  case "\${candidates[1]}" in
    :files) _files ;;
    :dirs) _files -/ ;;
    *) compadd -- "\${candidates[@]}" ;;
  esac
}
if [ "\${funcstack[1]}" = "_lifeboat" ]; then
  _lifeboat "$@"
else
  compdef _lifeboat lifeboat
fi
`;

/** `lifeboat completion bash|zsh`. */
export async function completionScript({ name, io }: VerbCall<{ help: FlagSpec }>): Promise<number> {
  if (name !== 'bash' && name !== 'zsh')
    throw new UsageError(`lifeboat completion: "${name}" is not a shell this completes (bash or zsh)`);
  io.out.write(name === 'bash' ? BASH : ZSH);
  return 0;
}
