package gen

// Realistic Canadian data: common given names and surnames (French, English and the largest
// immigrant communities), real street names and each city's province, postal prefix and area
// codes. Values are combined at random, so no generated person is a real one.

var firstNames = []string{
	"Marie", "Jean", "Pierre", "Louis", "Gabriel", "Olivier", "Emma", "Léa", "Chloé", "Florence",
	"Alice", "Zoé", "Noah", "William", "Thomas", "Félix", "Nathan", "Samuel", "Charlotte", "Rosalie",
	"Liam", "Lucas", "Benjamin", "Jacob", "Ethan", "Olivia", "Sophia", "Amelia", "Ava", "Isabella",
	"Mia", "Emily", "Hannah", "Jack", "James", "Logan", "Owen", "Daniel", "Matthew", "Sarah",
	"Priya", "Arjun", "Aarav", "Ananya", "Harpreet", "Gurpreet", "Simran", "Rohan", "Neha", "Vikram",
	"Wei", "Jing", "Li", "Mei", "Hao", "Yan", "Chen", "Min-jun", "Ji-woo", "Hiroshi",
	"Mohamed", "Ahmed", "Fatima", "Omar", "Yasmine", "Karim", "Amira", "Youssef", "Leila", "Hassan",
	"José", "María", "Sofía", "Diego", "Camila", "Mateo", "Valentina", "Jonathan", "Kevin", "Jessica",
	"Ashley", "Michael", "David", "Christopher", "Stéphanie", "Mélanie", "Isabelle", "Nathalie", "Éric", "François",
	"Mathieu", "Maxime", "Alexandre", "Julie", "Catherine", "Geneviève", "Sébastien", "Patrick", "Annie", "Marc",
}

var lastNames = []string{
	"Tremblay", "Gagnon", "Roy", "Côté", "Bouchard", "Gauthier", "Morin", "Lavoie", "Fortin", "Gagné",
	"Ouellet", "Pelletier", "Bélanger", "Lévesque", "Bergeron", "Leblanc", "Paquette", "Girard", "Simard", "Boucher",
	"Caron", "Beaulieu", "Cloutier", "Dubé", "Poirier", "Fournier", "Lapointe", "Leclerc", "Lefebvre", "Poulin",
	"Smith", "Brown", "Wilson", "MacDonald", "Taylor", "Campbell", "Anderson", "Jones", "Johnson", "Williams",
	"Martin", "Thompson", "Young", "White", "Moore", "Stewart", "Clark", "Robinson", "Walker", "Scott",
	"Patel", "Singh", "Sharma", "Gill", "Sidhu", "Grewal", "Dhillon", "Kaur", "Gupta", "Shah",
	"Chen", "Wang", "Li", "Zhang", "Liu", "Wong", "Lee", "Kim", "Park", "Nguyen",
	"Tran", "Le", "Pham", "Ali", "Khan", "Hussain", "Haddad", "Khoury", "Ahmed", "Mohamed",
	"Rodriguez", "Garcia", "Silva", "Santos", "Rossi", "Russo", "Ferrari", "Costa", "Murphy", "O'Brien",
	"Kelly", "Ryan", "Sullivan", "McLean", "Fraser", "Ross", "Reid", "Graham", "Hamilton", "St-Pierre",
}

var mailDomains = []string{
	"gmail.com", "videotron.ca", "rogers.com", "bell.net", "outlook.com", "yahoo.ca", "hotmail.com", "shaw.ca",
	"icloud.com", "sympatico.ca", "telus.net", "cogeco.ca",
}

var companies = []string{
	"Boulangerie du Coin", "Maple Leaf Consulting", "Nordique Design", "Lakeshore Dental", "Pixel & Co",
	"Atelier Laurier", "Harbour Accounting", "Prairie Analytics",
}

type city struct {
	name, province, postalLetter string
	areaCodes                    []string
	streets                      []string
}

var cities = []city{
	{"Montréal", "QC", "H", []string{"514", "438"}, []string{"Rue Sherbrooke O", "Boulevard Saint-Laurent", "Rue Saint-Denis",
		"Avenue du Mont-Royal E", "Rue King O", "Rue Notre-Dame O", "Avenue Papineau", "Rue Ontario E"}},
	{"Toronto", "ON", "M", []string{"416", "647", "437"}, []string{"Yonge St", "Queen St W", "King St W", "Bloor St W",
		"Dundas St E", "Spadina Ave", "Bathurst St", "Eglinton Ave E"}},
	{"Vancouver", "BC", "V", []string{"604", "778"}, []string{"Granville St", "Robson St", "Davie St", "Main St",
		"Commercial Dr", "W Broadway", "Kingsway", "Denman St"}},
	{"Calgary", "AB", "T", []string{"403", "587"}, []string{"17 Ave SW", "Macleod Trail SE", "Centre St N", "4 St SW"}},
	{"Ottawa", "ON", "K", []string{"613", "343"}, []string{"Rideau St", "Bank St", "Elgin St", "Wellington St W"}},
	{"Québec", "QC", "G", []string{"418", "581"}, []string{"Grande Allée E", "Rue Saint-Jean", "Boulevard Charest E", "Rue de la Couronne"}},
	{"Halifax", "NS", "B", []string{"902", "782"}, []string{"Spring Garden Rd", "Barrington St", "Quinpool Rd", "Robie St"}},
	{"Winnipeg", "MB", "R", []string{"204", "431"}, []string{"Portage Ave", "Main St", "Corydon Ave", "Osborne St"}},
	{"Edmonton", "AB", "T", []string{"780", "587"}, []string{"Jasper Ave", "Whyte Ave", "104 St NW", "Kingsway NW"}},
	{"Victoria", "BC", "V", []string{"250", "778"}, []string{"Douglas St", "Fort St", "Cook St", "Yates St"}},
}
