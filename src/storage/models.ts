import type { CalibrationRecord, CustomModelRecord } from './model-schema';
import { Connection } from './connection';

/** Models added by URL, and models' measured speeds by GPU. */
export class Models extends Connection {
  /** Models added by URL, oldest first. */
  listCustomModels(): Promise<CustomModelRecord[]> {
    return this.read('the models added by URL', async () => (await this.db.getAll('customModels')).sort((a, b) => a.addedAt - b.addedAt));
  }

  putCustomModel(model: CustomModelRecord): Promise<void> {
    return this.guard(`the model "${model.label}"`, async () => {
      await this.db.put('customModels', model);
    });
  }

  deleteCustomModel(id: string): Promise<void> {
    return this.guard('the deletion of the model', async () => {
      await this.db.delete('customModels', id);
    });
  }

  /** A model's measured speed on the GPU `adapter` names, if it was measured there. */
  getCalibration(modelId: string, adapter: string): Promise<CalibrationRecord | undefined> {
    return this.read("the model's measured speed", () => this.db.get('calibrations', [modelId, adapter]));
  }

  /** Every measured speed, on whatever GPU. */
  listCalibrations(): Promise<CalibrationRecord[]> {
    return this.read('the measured model speeds', () => this.db.getAll('calibrations'));
  }

  putCalibration(record: CalibrationRecord): Promise<void> {
    return this.guard("the model's measured speed", async () => {
      await this.db.put('calibrations', record);
    });
  }

  /** Forgets a model's measured speeds on every GPU (a custom model removed: its id may name another model later). */
  deleteCalibrations(modelId: string): Promise<void> {
    return this.guard("the deletion of the model's measured speeds", async () => {
      // Adapters are strings, and arrays sort after every string: this range holds all of the model's keys.
      await this.db.delete('calibrations', IDBKeyRange.bound([modelId, ''], [modelId, []]));
    });
  }
}
