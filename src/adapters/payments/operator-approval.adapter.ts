// The payment provider a self-hosted Matte ships with: nothing is charged online; the operator takes
// payment however they like and approves the pending purchase with `bin/matte purchases approve ID`.
import type { PaymentProvider } from './payment-provider.ts';

export class OperatorApprovalProvider implements PaymentProvider {
  readonly name = 'operator';

  async begin(purchase: { id: string }) {
    return {
      state: 'pending' as const,
      reference: null,
      instructions: `Purchase ${purchase.id} waits for the operator's approval; the credits arrive in the pack pool once it is approved.`,
    };
  }
}
