/** The kubecell-placement-index controller's one setting: the namespace Cells live in. */
import { EnvReader } from '../config/env-reader.js';

export interface PlacementIndexConfig {
  /** The namespace Cells, the index and its source live in (the controller namespace). */
  cellNamespace: string;
}

export function loadPlacementIndexConfig(
  env: NodeJS.ProcessEnv = process.env,
): PlacementIndexConfig {
  const reader = new EnvReader(env);
  const config = { cellNamespace: reader.controllerNamespace() };
  reader.finish();
  return config;
}
