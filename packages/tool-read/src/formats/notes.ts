/** Model text more than one room says. */

/** Said after a window the step's shared budget (maxBytesPerStep) ended, or when it left nothing to read. */
export const STEP_SPENT = 'this step\'s reads reached maxBytesPerStep'
