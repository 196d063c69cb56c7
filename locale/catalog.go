package locale

import (
	"golang.org/x/text/language"
	"golang.org/x/text/message/catalog"
)

// Message is one entry of the catalogue: a key and its text in each language. The texts are
// fmt formats; both must use the same verbs in the same order (the catalogue test checks it).
type Message struct {
	Key, EN, FR string
}

// messages holds Messages for the printers.
var messages = func() *catalog.Builder {
	b := catalog.NewBuilder(catalog.Fallback(language.English))
	for _, m := range Messages {
		// The keys are fixed strings of this file: a failure is a defect the test catches.
		_ = b.SetString(language.English, m.Key, m.EN)
		_ = b.SetString(language.CanadianFrench, m.Key, m.FR)
	}
	return b
}()

// Messages is every text subprov writes to a subscriber, in English and Canadian French. To add
// one: add its entry here with both languages, and write it with Lang.T or Msg by its key.
var Messages = []Message{
	// Shared pieces of mails.
	{"mail.hello", "Hello,", "Bonjour,"},
	{"mail.ignore", "If you did not expect this message, you can ignore it.", "Si vous n’attendiez pas ce message, vous pouvez l’ignorer."},

	// Mailed links (auth).
	{"token.password_reset.subject", "Reset your password", "Réinitialisez votre mot de passe"},
	{"token.password_reset.intro", "Someone asked to reset the password of your internet account. If it was you, choose a new password here (valid 15 minutes):",
		"Quelqu’un a demandé de réinitialiser le mot de passe de votre compte Internet. Si c’était vous, choisissez un nouveau mot de passe ici (valide 15 minutes) :"},
	{"token.setup.subject", "You have been added to an internet account", "Vous avez été ajouté à un compte Internet"},
	{"token.setup.intro", "You can now manage the internet account. Set your password here (valid 14 days):",
		"Vous pouvez maintenant gérer le compte Internet. Choisissez votre mot de passe ici (valide 14 jours) :"},
	{"token.activation.subject", "Activate your internet account", "Activez votre compte Internet"},
	{"token.activation.intro", "Activate your account and choose a password here (valid 72 hours):",
		"Activez votre compte et choisissez un mot de passe ici (valide 72 heures) :"},

	// Installation booking (install).
	{"booking.invite.subject", "Book your installation appointment", "Prenez rendez-vous pour votre installation"},
	{"booking.invite.body", "Your internet service at %s needs a technician visit. Choose the day and time that suit you here:",
		"Votre service Internet au %s nécessite la visite d’un technicien. Choisissez le jour et l’heure qui vous conviennent ici :"},
	{"booking.invite.once", "The link works once: after you confirm an appointment it shows your booking.",
		"Le lien ne sert qu’une fois : après la confirmation d’un rendez-vous, il affiche votre réservation."},
	{"booking.confirmed.subject", "Your installation appointment is booked", "Votre rendez-vous d’installation est confirmé"},
	{"booking.confirmed.body", "Your installation appointment is booked:\n\n%s\nat %s",
		"Votre rendez-vous d’installation est confirmé :\n\n%s\nau %s"},
	{"booking.confirmed.home", "A technician will come during this window. Please make sure someone is home.",
		"Un technicien passera pendant cette plage horaire. Assurez-vous que quelqu’un soit sur place."},
	{"booking.slot", "%s, %s–%s", "%s, de %s à %s"},

	// Billing.
	{"billing.declined.subject", "Payment failed — invoice %s", "Paiement refusé — facture %s"},
	{"billing.declined.body", "We could not charge your card for invoice %s (%s). We will try again on %s.\nPlease update your card in your account to avoid an interruption of service.",
		"Nous n’avons pas pu débiter votre carte pour la facture %s (%s). Nous réessaierons le %s.\nVeuillez mettre à jour votre carte dans votre compte pour éviter une interruption de service."},
	{"billing.suspended.subject", "Service suspended — invoice %s unpaid", "Service suspendu — facture %s impayée"},
	{"billing.suspended.body", "Invoice %s (%s) is still unpaid after several attempts, so your internet service has been suspended.\nIt is restored as soon as the invoice is paid.",
		"La facture %s (%s) est toujours impayée après plusieurs tentatives; votre service Internet a donc été suspendu.\nIl sera rétabli dès que la facture sera payée."},
	{"billing.reinstalled.subject", "Your internet service is active again", "Votre service Internet est de nouveau actif"},
	{"billing.reinstalled.body", "Your %s internet service (%s) is active again: the technician has finished the installation.\nBilling resumes today with the rest of this month.",
		"Votre service Internet %s (%s) est de nouveau actif : le technicien a terminé l’installation.\nLa facturation reprend aujourd’hui avec le reste du mois."},

	// Portal.
	{"portal.billing_removed.subject", "Your billing e-mail address was changed", "Votre adresse courriel de facturation a été modifiée"},
	{"portal.billing_removed.body", "Invoices for your %s internet account will no longer be sent to this address.\nIf you did not ask for this change, contact %s support.",
		"Les factures de votre compte Internet %s ne seront plus envoyées à cette adresse.\nSi vous n’avez pas demandé ce changement, communiquez avec le soutien de %s."},
	{"portal.billing_added.subject", "You now receive the invoices of an internet account", "Vous recevez maintenant les factures d’un compte Internet"},
	{"portal.billing_added.body", "From now on, invoices for a %s internet account are sent to this address.",
		"Dorénavant, les factures d’un compte Internet %s sont envoyées à cette adresse."},
	{"portal.back.subject", "Your internet service is back", "Votre service Internet est rétabli"},
	{"portal.back.body", "Your %s internet service (%s) is active again.", "Votre service Internet %s (%s) est de nouveau actif."},
	{"portal.welcome.subject", "Welcome to %s", "Bienvenue chez %s"},
	{"portal.welcome.body", "Welcome! Your %s internet service (%s) is now active.", "Bienvenue! Votre service Internet %s (%s) est maintenant actif."},

	// Support agents (agent).
	{"agent.code.subject", "Your verification code", "Votre code de vérification"},
	{"agent.code.body", "%s support asked to confirm your identity. Your verification code is:\n\n%s\n\nIt is valid for 10 minutes. Read it to the support agent only if you are talking to %s support right now.",
		"Le soutien de %s a demandé de confirmer votre identité. Votre code de vérification est :\n\n%s\n\nIl est valide 10 minutes. Lisez-le à l’agent seulement si vous parlez au soutien de %s en ce moment."},
	{"agent.code.sms", "%s verification code: %s (valid 10 minutes)", "Code de vérification %s : %s (valide 10 minutes)"},
	{"agent.invoice.subject", "Copy of invoice %s", "Copie de la facture %s"},
	{"agent.invoice.body", "As requested, here is a copy of your %s invoice.\n\nInvoice: %s\nDate: %s\nPeriod: %s\nTotal: %s\nStatus: %s\n\nThe PDF is in your customer portal under Invoices.",
		"Comme demandé, voici une copie de votre facture %s.\n\nFacture : %s\nDate : %s\nPériode : %s\nTotal : %s\nÉtat : %s\n\nLe PDF se trouve dans votre portail client, sous Factures."},

	// Invoice and credit note states, as a subscriber reads them.
	{"status.open", "Open", "Ouverte"},
	{"status.paid", "Paid", "Payée"},
	{"status.void", "Void", "Annulée"},
	{"status.overdue", "Overdue", "En retard"},
	{"status.failed", "Failed", "Échouée"},
	{"credit.open", "Open", "Ouverte"},
	{"credit.refunded", "Refunded", "Remboursée"},
	{"credit.paid_out", "Paid out", "Versée"},
	{"credit.applied", "Applied to account", "Portée au compte"},

	// PDF documents (pdf).
	{"pdf.invoice", "Invoice", "Facture"},
	{"pdf.invoice.title", "INVOICE", "FACTURE"},
	{"pdf.invoice.number", "Invoice no.", "Facture n°"},
	{"pdf.invoice.date", "Invoice date", "Date de facture"},
	{"pdf.due_date", "Due date", "Date d’échéance"},
	{"pdf.period", "Period", "Période"},
	{"pdf.status", "Status", "État"},
	{"pdf.service_address", "Service address", "Adresse de service"},
	{"pdf.net", "Net", "Sous-total"},
	{"pdf.tax_at", "Tax at %s", "Taxes à %s"},
	{"pdf.total", "Total %s", "Total %s"},
	{"pdf.stamp.paid", "PAID", "PAYÉE"},
	{"pdf.stamp.void", "VOID", "ANNULÉE"},
	{"pdf.paid_on", "PAID on %s. Thank you!", "PAYÉE le %s. Merci!"},
	{"pdf.paid", "PAID. Thank you!", "PAYÉE. Merci!"},
	{"pdf.voided", "This invoice has been voided; no payment is due.", "Cette facture a été annulée; aucun paiement n’est dû."},
	{"pdf.please_pay", "Please pay %s by %s.", "Veuillez payer %s d’ici le %s."},
	{"pdf.credit", "Credit note", "Note de crédit"},
	{"pdf.credit.title", "CREDIT NOTE", "NOTE DE CRÉDIT"},
	{"pdf.credit.number", "Credit note no.", "Note de crédit n°"},
	{"pdf.issue_date", "Issue date", "Date d’émission"},
	{"pdf.credits_invoice", "Credits invoice", "Crédite la facture"},
	{"pdf.state", "State", "État"},
	{"pdf.reason", "Reason", "Motif"},
	{"pdf.total_credit", "Total credit %s", "Crédit total %s"},
	{"pdf.taxes_included", "Amounts include applicable taxes.", "Les montants comprennent les taxes applicables."},
	{"pdf.credit.refunded", "This credit has been refunded to your original payment method.", "Ce crédit a été remboursé sur votre moyen de paiement d’origine."},
	{"pdf.credit.paid_out", "This credit has been paid out to you.", "Ce crédit vous a été versé."},
	{"pdf.credit.applied", "This credit has been applied to your account.", "Ce crédit a été porté à votre compte."},
	{"pdf.credit.open", "This credit will be applied to your next invoice.", "Ce crédit sera porté à votre prochaine facture."},
	{"pdf.no", "No. %s", "N° %s"},
	{"pdf.continued", "%s (continued)", "%s (suite)"},
	{"pdf.questions", "Questions? Contact support.", "Des questions? Communiquez avec le soutien."},
	{"pdf.questions_provider", "Questions? Contact %s support.", "Des questions? Communiquez avec le soutien de %s."},
	{"pdf.page", "Page %s of %s", "Page %s de %s"},
	{"pdf.bill_to", "BILL TO", "FACTURER À"},
	{"pdf.customer_number", "CUSTOMER NUMBER", "NUMÉRO DE CLIENT"},
	{"pdf.col.description", "Description", "Description"},
	{"pdf.col.unit_price", "Unit price", "Prix unitaire"},
	{"pdf.col.days", "Days", "Jours"},
	{"pdf.col.amount", "Amount", "Montant"},
	{"pdf.no_charges", "No charges", "Aucuns frais"},

	// Pages (web).
	{"page.booking.title", "Book your installation", "Prenez rendez-vous pour votre installation"},
	{"page.booking.intro", "%s needs a technician visit to connect your internet service. Choose a time that suits you.",
		"%s doit envoyer un technicien pour brancher votre service Internet. Choisissez le moment qui vous convient."},
	{"page.address", "Address", "Adresse"},
	{"page.plan", "Plan", "Forfait"},
	{"page.booking.choose", "Choose an appointment", "Choisissez un rendez-vous"},
	{"page.booking.window", "Each time is a window: the technician arrives during it.", "Chaque heure est une plage : le technicien arrive pendant celle-ci."},
	{"page.booking.full", "(full)", "(complet)"},
	{"page.booking.one_left", "(1 place left)", "(1 place restante)"},
	{"page.booking.left", "(%d places left)", "(%d places restantes)"},
	{"page.booking.confirm", "Confirm appointment", "Confirmer le rendez-vous"},
	{"page.booking.none", "There are no free appointments in the coming weeks. Please try this link again later, or contact %s.",
		"Aucun rendez-vous n’est libre dans les prochaines semaines. Réessayez ce lien plus tard ou communiquez avec %s."},
	{"page.booked.title", "Your installation is booked", "Votre installation est confirmée"},
	{"page.booked.when", "A technician will come on", "Un technicien passera le"},
	{"page.booked.sent", "We sent you a confirmation by e-mail.", "Nous vous avons envoyé une confirmation par courriel."},
	{"page.booked.home", "Please make sure someone is home during this window. To change the appointment, contact %s.",
		"Assurez-vous que quelqu’un soit sur place pendant cette plage. Pour changer le rendez-vous, communiquez avec %s."},
	{"page.paused.title", "Booking paused", "Réservation suspendue"},
	{"page.paused.text", "Your installation booking is paused for now. %s will send you a new link when it can go ahead.",
		"La réservation de votre installation est suspendue pour le moment. %s vous enverra un nouveau lien quand elle pourra avoir lieu."},
	{"page.replaced.title", "This link was replaced", "Ce lien a été remplacé"},
	{"page.replaced.text", "A newer booking link was sent to you by e-mail. Please use the link in the most recent message.",
		"Un lien de réservation plus récent vous a été envoyé par courriel. Utilisez le lien du message le plus récent."},
	{"page.expired.title", "This link has expired", "Ce lien a expiré"},
	{"page.booking_over.text", "This installation no longer needs an appointment. Contact %s if you have a question.",
		"Cette installation n’a plus besoin de rendez-vous. Communiquez avec %s si vous avez une question."},
	{"page.password.reset.title", "Choose a new password", "Choisissez un nouveau mot de passe"},
	{"page.password.reset.intro", "Choose the new password of your internet account.", "Choisissez le nouveau mot de passe de votre compte Internet."},
	{"page.password.reset.button", "Change password", "Changer le mot de passe"},
	{"page.password.set.title", "Set your password", "Choisissez votre mot de passe"},
	{"page.password.set.intro", "Choose the password you will sign in with, together with your e-mail address.",
		"Choisissez le mot de passe avec lequel vous vous connecterez, avec votre adresse courriel."},
	{"page.password.set.button", "Set password", "Enregistrer le mot de passe"},
	{"page.password.new", "New password", "Nouveau mot de passe"},
	{"page.password.min", "At least %d characters.", "Au moins %d caractères."},
	{"page.password.too_short", "The password needs at least %d characters.", "Le mot de passe doit compter au moins %d caractères."},
	{"page.password.repeat", "The new password again", "Le nouveau mot de passe, encore une fois"},
	{"page.password.enter", "Enter a new password.", "Entrez un nouveau mot de passe."},
	{"page.password.differ", "The two passwords differ. Type the same password twice.", "Les deux mots de passe diffèrent. Tapez deux fois le même mot de passe."},
	{"page.password.dead.title", "This link no longer works", "Ce lien ne fonctionne plus"},
	{"page.password.dead.text", "The link is invalid, was already used, or has expired. Ask for a new one: the password-reset form of the portal sends one to your e-mail address.",
		"Le lien est invalide, a déjà servi ou a expiré. Demandez-en un nouveau : le formulaire de réinitialisation du portail en envoie un à votre adresse courriel."},
	{"page.export.dead.text", "The link is invalid, was already used, or has expired. Ask for a new copy of your data from your account.",
		"Le lien est invalide, a déjà servi ou a expiré. Demandez une nouvelle copie de vos données depuis votre compte."},
	{"page.password.done.title", "Your password is set", "Votre mot de passe est enregistré"},
	{"page.password.done.text", "You can now sign in to your internet account with your e-mail address and the new password.",
		"Vous pouvez maintenant vous connecter à votre compte Internet avec votre adresse courriel et le nouveau mot de passe."},
	{"page.error.400", "Something is missing", "Il manque quelque chose"},
	{"page.error.404", "Link not found", "Lien introuvable"},
	{"page.error.409", "This cannot be done now", "Impossible pour le moment"},
	{"page.error.410", "This link has expired", "Ce lien a expiré"},
	{"page.error.422", "Please check the form", "Veuillez vérifier le formulaire"},
	{"page.error.502", "Please try again shortly", "Veuillez réessayer sous peu"},
	{"page.error.429", "Please wait a moment", "Veuillez patienter un instant"},
	{"page.error.other", "Something went wrong", "Un problème est survenu"},
}
