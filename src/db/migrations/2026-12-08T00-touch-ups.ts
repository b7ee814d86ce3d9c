// Frozen: never import today's schema types here. A seller's touch-up of a photo (erase and restore strokes):
// while a photo is touched up, `cutout_blob` names the touched-up cut-out and `model_cutout_blob` the model's,
// which the check and reports judge and a revert brings back; `touch_up` (JSON) says what was done. Both null
// otherwise; a re-run clears them.
import type { Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('items').addColumn('model_cutout_blob', 'text').execute();
  await db.schema.alterTable('items').addColumn('touch_up', 'text').execute();
}
