import type { SimOptions } from './options.ts';
import { mulberry32 } from './random.ts';

/** What to do with one generation request. */
export type Verdict = 'serve' | 'fault' | 'hang' | 'die';

/**
 * Counts generation requests and decides, deterministically from the seed, which ones misbehave.
 * Reads the options live, so faults a test sets on a running server apply from the next request.
 */
export class FaultInjector {
  private count = 0;
  private dead = false;
  private readonly random: () => number;

  constructor(private readonly options: SimOptions) {
    this.random = mulberry32(options.seed);
  }

  get generationRequests(): number {
    return this.count;
  }

  /** Once dead, the server resets every connection, like a crashed vLLM whose port stays bound. */
  get isDead(): boolean {
    return this.dead;
  }

  set isDead(dead: boolean) {
    this.dead = dead;
  }

  onGenerationRequest(): Verdict {
    const k = ++this.count;
    const { dieAfter, faultAfter, hang, faultRate } = this.options;
    if (dieAfter !== undefined && k > dieAfter) {
      this.dead = true;
      return 'die';
    }
    if (k <= faultAfter) return 'serve';
    if (hang) return 'hang';
    return faultRate > 0 && this.random() < faultRate ? 'fault' : 'serve';
  }

  healthStatus(): number {
    return this.count >= this.options.faultAfter ? this.options.healthStatus : 200;
  }
}
