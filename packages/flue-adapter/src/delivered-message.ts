import type { UserMessage } from '@eve-flue/session-contract';

/** Flue's `DeliveredMessage` for a user: text, plus images as attachments (the only kind Flue takes). */
export interface DeliveredUserMessage {
  kind: 'user';
  body: string;
  attachments?: { type: 'image'; data: string; mimeType: string; filename?: string }[];
}

/**
 * An Eve message as Flue receives it. Images sent inline become attachments; any other file
 * (or a file sent by URL) reaches the model as a note naming it, as Eve does for files it cannot
 * show the model.
 */
export function toDeliveredMessage(message: UserMessage): DeliveredUserMessage {
  const attachments: NonNullable<DeliveredUserMessage['attachments']> = [];
  const notes: string[] = [];
  for (const file of message.files) {
    const name = file.filename ? `"${file.filename}"` : 'a file';
    if (file.data && file.mediaType.startsWith('image/')) {
      attachments.push({
        type: 'image',
        data: Buffer.from(file.data).toString('base64'),
        mimeType: file.mediaType,
        ...(file.filename ? { filename: file.filename } : {}),
      });
    } else if (file.url) {
      notes.push(`[The person linked ${name} (${file.mediaType}) at ${file.url}.]`);
    } else {
      notes.push(`[The person attached ${name} (${file.mediaType}, ${file.data?.byteLength ?? 0} bytes), which this agent cannot read.]`);
    }
  }
  const body = [message.text, ...notes].filter((part) => part.length > 0).join('\n\n');
  return { kind: 'user', body, ...(attachments.length > 0 ? { attachments } : {}) };
}
