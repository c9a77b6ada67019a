/**
 * The hook's notion of "now". Hooks take it as an argument so that a test can fix it and the
 * same request at the same time yields byte-identical status.
 */
export type Clock = () => Date;

export const systemClock: Clock = () => new Date();
